package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/saga"
)

// demoPaymentTimeout is how long the demo's transfer waits for payment.
const demoPaymentTimeout = 300 * time.Millisecond

// demoTransfer is the demo saga's state.
type demoTransfer struct {
	Amount    float64 `json:"amount"`
	Paid      bool    `json:"paid"`
	Cancelled bool    `json:"cancelled"`
}

type demoTransferEvent struct {
	Transfer string  `json:"transfer"`
	Amount   float64 `json:"amount,omitempty"`
}

// demoSaga declares the demo's transfer saga: a requested transfer waits
// for its payment; unpaid at the timeout, it is cancelled.
func demoSaga() *saga.Saga[demoTransfer] {
	s := saga.New[demoTransfer]("demo.TransferSaga")
	id := func(e saga.Event[demoTransferEvent]) string { return e.Value.Transfer }
	saga.StartOnType(s, "TransferRequested", id, func(ctx saga.Context, e saga.Event[demoTransferEvent], st *demoTransfer) error {
		st.Amount = e.Value.Amount
		return saga.Schedule(ctx, "payment-timeout", saga.In(demoPaymentTimeout), nil)
	})
	saga.OnType(s, "TransferPaid", id, func(_ saga.Context, _ saga.Event[demoTransferEvent], st *demoTransfer) error {
		st.Paid = true
		return saga.Complete
	})
	saga.OnDeadline(s, "payment-timeout", func(_ saga.Context, _ struct{}, st *demoTransfer) error {
		st.Cancelled = true
		return saga.Complete
	})
	return s
}

// runSagaDemo requests two transfers, pays one, runs the saga's consumer
// and its deadline deliverer until the unpaid one is cancelled.
func runSagaDemo(ctx context.Context, out io.Writer, e *engine.Engine, store *eventstore.Store, adv *hwm.Advancer) error {
	st, err := saga.Open(e, demoSaga())
	if err != nil {
		return err
	}
	for _, ev := range []struct{ id, typ, payload string }{
		{"tr-1", "TransferRequested", `{"transfer":"tr-1","amount":75}`},
		{"tr-2", "TransferRequested", `{"transfer":"tr-2","amount":20}`},
		{"tr-2", "TransferPaid", `{"transfer":"tr-2"}`},
	} {
		if _, err := store.Append(ctx, eventstore.Stream{AggregateType: "bank.Transfer", AggregateID: ev.id,
			Events: []eventstore.Event{{Type: ev.typ, Payload: []byte(ev.payload)}}}); err != nil {
			return err
		}
	}
	for moved := true; moved; {
		if moved, err = adv.Cycle(ctx); err != nil {
			return err
		}
	}
	opts := st.Options(consumer.EventStore(store, nil))
	opts.Workers, opts.Logger = 1, slog.New(slog.DiscardHandler)
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
	if err != nil {
		return err
	}
	for n := 1; n > 0; {
		if n, err = r.Poll(ctx); err != nil {
			return err
		}
	}
	pending, err := st.PendingDeadlines(ctx, "tr-1")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nsaga    demo.TransferSaga: tr-1 waits for payment (%d deadline, due %s after its request on the database clock), tr-2 paid and completed\n",
		pending, demoPaymentTimeout)
	dl, err := saga.NewDeadlines(e, []saga.Target{st}, saga.WithPollInterval(50*time.Millisecond))
	if err != nil {
		return err
	}
	start := time.Now()
	for time.Since(start) < 30*time.Second {
		if _, err := dl.Poll(ctx); err != nil {
			return err
		}
		if in, _, err := st.Get(ctx, "tr-1"); err != nil {
			return err
		} else if in.Completed {
			fmt.Fprintf(out, "saga    deadline payment-timeout delivered %s later: tr-1 cancelled unpaid (%.2f), completed\n",
				time.Since(start).Round(10*time.Millisecond), in.State.Amount)
			return nil
		}
		if err := engine.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("demo saga: tr-1's payment timeout was not delivered within 30 s")
}
