package consumer

import (
	"time"
)

// DeliveryStatus is CONSUMER_UNDELIVERED_MESSAGES.status: what became of a
// message the consumer could not apply yet.
type DeliveryStatus string

// Statuses of the spec. The table is the protocol between the runner and
// the operator controls: an operator changes rows, the runner of every
// instance acts on them at its next poll.
const (
	// StatusFailed: retried at next_retry_at (NULL: at once).
	StatusFailed DeliveryStatus = "FAILED"
	// StatusWaiting: behind an earlier message of its key; applied in
	// position order once every earlier row of the key is gone.
	StatusWaiting DeliveryStatus = "WAITING"
	// StatusHalted: its budget spent, it halted the consumer (APPLY_ERROR)
	// and holds its key; a resume retries it with a fresh budget, a resume
	// past it deletes it and records a skip.
	StatusHalted DeliveryStatus = "HALTED"
	// StatusDeadLetterKey: a key's first dead letter, or (failure_count 0,
	// no failure_reason) a later message of that key held dead behind it;
	// waits for an operator.
	StatusDeadLetterKey DeliveryStatus = "DEAD_LETTER_KEY"
	// StatusDeadLetter: parked; holds nothing; waits for an operator.
	StatusDeadLetter DeliveryStatus = "DEAD_LETTER"
)

// Holds tells whether a row of status s holds its key: a new message of
// the key is recorded behind it. Every status but DEAD_LETTER does.
func (s DeliveryStatus) Holds() bool { return s != StatusDeadLetter }

// Due tells whether a key's head of status s is applied at now: FAILED
// once its next retry (zero: at once) is not after now, WAITING (every
// earlier row of the key is gone) and HALTED (its consumer runs again: a
// resume, or a start after a crash between recording and halting) at once;
// a dead letter waits for an operator.
func (s DeliveryStatus) Due(nextRetry, now time.Time) bool {
	switch s {
	case StatusWaiting, StatusHalted:
		return true
	case StatusFailed:
		return nextRetry.IsZero() || !nextRetry.After(now)
	}
	return false
}

// Retryable tells whether an operator's dead-letter retry or delete
// selects a row of status s: DEAD_LETTER and DEAD_LETTER_KEY, the rows
// that wait for an operator. The runner retries the others itself.
func (s DeliveryStatus) Retryable() bool { return s == StatusDeadLetter || s == StatusDeadLetterKey }

// ErrorPolicy decides what a message whose retry budget is spent becomes.
type ErrorPolicy string

// Error policies.
const (
	// PolicyHalt halts the consumer with APPLY_ERROR (status HALTED).
	PolicyHalt ErrorPolicy = "HALT"
	// PolicyDeadLetterKey parks the message and every later message of its
	// key (status DEAD_LETTER_KEY); other keys go on.
	PolicyDeadLetterKey ErrorPolicy = "DEAD_LETTER_KEY"
	// PolicyDeadLetter parks the message alone (status DEAD_LETTER); its
	// key's later messages go on.
	PolicyDeadLetter ErrorPolicy = "DEAD_LETTER"
)

// MaxFailureReason is how many characters of a failure's class and
// message CONSUMER_UNDELIVERED_MESSAGES.failure_reason keeps (VARCHAR(1000)).
const MaxFailureReason = 1000

// Metrics receives a consumer's figures; plug in OpenTelemetry (package
// consumer/otel) or anything else. Calls come from the runner's workers
// concurrently, so an implementation must be safe for concurrent use and
// cheap: it runs on the apply path.
type Metrics interface {
	// Lag is reported after every poll per source and partition: the
	// source's mark minus what the runner has read and completed there
	// (at least its checkpoint; an idle partition read up to the mark lags
	// 0 before its empty stretch is saved).
	Lag(c Consumer, source string, partition int, lag int64)
	// Applied is reported after every apply that committed, with its
	// duration (handler and, when Transactional, its commit).
	Applied(c Consumer, source string, d time.Duration)
	// Retried is reported for every retry of a message: transient (the
	// database undid the attempt, no budget spent) or a spent attempt.
	Retried(c Consumer, source string, transient bool)
	// DeadLettered is reported when a message's budget is spent and it
	// becomes status (HALTED, DEAD_LETTER_KEY or DEAD_LETTER).
	DeadLettered(c Consumer, source string, status DeliveryStatus)
	// Halted is reported when the runner halts the consumer.
	Halted(c Consumer, reason HaltReason)
}
