package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// undeliveredOrder is the order undelivered counts are shown in: live
// statuses first, then the dead letters.
var undeliveredOrder = []consumer.DeliveryStatus{consumer.StatusFailed, consumer.StatusWaiting, consumer.StatusHalted,
	consumer.StatusDeadLetterKey, consumer.StatusDeadLetter}

func tabular(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
}

func printList(out io.Writer, list []consumer.ConsumerStatus) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(out, "no consumers")
		return err
	}
	w := tabular(out)
	head := []string{"CONSUMER", "STATE", "SINCE", "SOURCES", "LAG"}
	for _, s := range undeliveredOrder {
		head = append(head, string(s))
	}
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for _, c := range list {
		var lag int64
		sources := map[string]bool{}
		for _, p := range c.Partitions {
			lag += p.Lag
			sources[p.Source] = true
		}
		row := []string{c.Ref().String(), stateText(c), utcText(c.StateSince), strconv.Itoa(len(sources)), strconv.FormatInt(lag, 10)}
		for _, s := range undeliveredOrder {
			row = append(row, strconv.FormatInt(c.Undelivered[s], 10))
		}
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	return w.Flush()
}

func printStatus(out io.Writer, st consumer.ConsumerStatus) error {
	w := tabular(out)
	fmt.Fprintf(w, "consumer\t%s\n", st.Ref())
	fmt.Fprintf(w, "id\t%s\n", st.ID)
	fmt.Fprintf(w, "state\t%s since %s\n", stateText(st), utcText(st.StateSince))
	fmt.Fprintf(w, "epoch\t%d\n", st.Epoch)
	var counts []string
	for _, s := range undeliveredOrder {
		if n := st.Undelivered[s]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", s, n))
		}
	}
	if len(counts) == 0 {
		counts = []string{"none"}
	}
	fmt.Fprintf(w, "undelivered\t%s\n", strings.Join(counts, ", "))
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	w = tabular(out)
	fmt.Fprintln(w, "SOURCE\tPARTITION\tCHECKPOINT\tMARK\tLAG\tINCOMPLETE_THROUGH")
	for _, p := range st.Partitions {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\t%s\n", p.Source, p.Partition, optText(p.Checkpoint), optText(p.Mark), p.Lag, optText(p.IncompleteThrough))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return printOwnership(out, st.Leases)
}

// printOwnership prints the "ownership" table of a consumer's partition
// leases: one row per instance (state on the database clock, last
// heartbeat, expiry, partitions as partition@generation), then the free
// partitions; "not leased" for a consumer without lease rows.
func printOwnership(out io.Writer, v *consumer.LeaseView) error {
	if v == nil || !v.Leased {
		_, err := fmt.Fprintln(out, "ownership: not leased")
		return err
	}
	fmt.Fprintln(out, "ownership:")
	w := tabular(out)
	fmt.Fprintln(w, "INSTANCE\tHOST\tSTATE\tMEMBER\tLAST_HEARTBEAT\tEXPIRES_AT\tPARTITIONS@GENERATION")
	for _, in := range v.Instances {
		member := "no"
		if in.Member {
			member = "yes"
		}
		host := in.Host
		if host == "" {
			host = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", in.ID, host, in.State, member, optTimeText(in.LastHeartbeat),
			optTimeText(in.ExpiresAt), leasedText(in.Partitions))
	}
	if len(v.Free) > 0 {
		fmt.Fprintf(w, "(free)\t-\t-\t-\t-\t-\t%s\n", leasedText(v.Free))
	}
	return w.Flush()
}

// leasedText is "0@1 3@2" (partition@generation), "-" for none.
func leasedText(ps []consumer.LeasedPartition) string {
	if len(ps) == 0 {
		return "-"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%d@%d", p.Partition, p.Generation)
	}
	return strings.Join(parts, " ")
}

// optTimeText shows a database-clock time to the millisecond (heartbeats
// are a second apart by default), "-" for none.
func optTimeText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

func printDeadLetters(out io.Writer, dls []consumer.UndeliveredRow) error {
	if len(dls) == 0 {
		_, err := fmt.Fprintln(out, "no dead letters")
		return err
	}
	w := tabular(out)
	fmt.Fprintln(w, "ID\tSOURCE\tPARTITION\tKEY\tPOSITION\tSTATUS\tFAILURES\tNEXT_RETRY_AT\tRECORDED_AT\tFAILURE_REASON")
	for _, d := range dls {
		next := "-"
		if !d.NextRetryAt.IsZero() {
			next = utcText(d.NextRetryAt)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", d.ID, d.Source, d.Partition, quoteKey(d.Key), d.Position,
			d.Status, d.FailureCount, next, utcText(d.RecordedAt), oneLine(d.FailureReason, 80))
	}
	return w.Flush()
}

func stateText(c consumer.ConsumerStatus) string {
	if c.HaltReason != "" {
		return fmt.Sprintf("%s (%s)", c.State, c.HaltReason)
	}
	return string(c.State)
}

func utcText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func optText(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

// quoteKey shows an empty key as "" and quotes keys a table would break on.
func quoteKey(k string) string {
	if k == "" || strings.ContainsAny(k, " \t\n\"") {
		return strconv.Quote(k)
	}
	return k
}

// oneLine keeps a failure reason on one table line, cut to max runes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}
