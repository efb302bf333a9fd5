package consumer

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoSuchMessage is wrapped by *NoSuchMessageError.
var ErrNoSuchMessage = errors.New("no such message")

// NoSuchMessageError refuses a skip whose message the source does not hold
// as given: no message at that position of that partition, another key, or
// a position past the source's mark without the explicit ahead choice.
type NoSuchMessageError struct {
	Consumer Ref
	Skip     Skip
	// Mark is the source's mark when it was checked.
	Mark   int64
	Reason string
}

func (e *NoSuchMessageError) Error() string {
	return fmt.Sprintf("consumer %s: skip %s partition %d position %d: %s", e.Consumer, e.Skip.Source, e.Skip.Partition, e.Skip.Position, e.Reason)
}

// Unwrap makes errors.Is(err, ErrNoSuchMessage) hold.
func (e *NoSuchMessageError) Unwrap() error { return ErrNoSuchMessage }

// SkipMessage records s, as Skip does, after checking it against src (the
// source named s.Source): a message exists at s.Position in partition
// s.Partition, with key s.Key unless s.EveryKey. A position past src's mark
// names no readable message yet; it is refused unless ahead, the caller's
// explicit choice to skip a message before it is readable.
func (o *Operator) SkipMessage(ctx context.Context, ref Ref, src Source, s Skip, ahead bool) (Changes, error) {
	if err := checkSkip(s); err != nil {
		return Changes{}, err
	}
	if src.Name() != s.Source {
		return Changes{}, &InvalidSkipError{s, fmt.Sprintf("checked against source %q", src.Name())}
	}
	if s.Partition >= src.Partitions() {
		return Changes{}, &InvalidSkipError{s, fmt.Sprintf("source %s has partitions 0..%d", s.Source, src.Partitions()-1)}
	}
	mark, err := src.Mark(ctx)
	if err != nil {
		return Changes{}, err
	}
	refuse := func(reason string) (Changes, error) {
		return Changes{}, &NoSuchMessageError{Consumer: ref, Skip: s, Mark: mark, Reason: reason}
	}
	if s.Position > mark {
		if !ahead {
			return refuse(fmt.Sprintf("the position is past the source's mark %d, so no message there is readable yet; skip it ahead of the mark only by explicit choice (--ahead)", mark))
		}
		return o.Skip(ctx, ref, s)
	}
	msgs, err := src.Read(ctx, s.Partition, s.Position-1, s.Position, 1)
	if err != nil {
		return Changes{}, err
	}
	switch {
	case len(msgs) == 0 || msgs[0].Position != s.Position:
		return refuse(fmt.Sprintf("the source holds no message there (mark %d)", mark))
	case !s.EveryKey && msgs[0].Key != s.Key:
		return refuse(fmt.Sprintf("the message's key is %q, not %q", msgs[0].Key, s.Key))
	}
	return o.Skip(ctx, ref, s)
}
