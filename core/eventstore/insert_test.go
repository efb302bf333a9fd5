package eventstore

import "testing"

// TestRowSlotsFollowTheInsertBinds: a row's values are bound by the slot of
// each name in dialect.EventInsertBinds (the engine's insert looks names up
// there), so the p… slot constants must name the same binds in the same order.
func TestRowSlotsFollowTheInsertBinds(t *testing.T) {
	want := map[int]string{
		pID: "id", pAggregateID: "aggregate_id", pAggregateType: "aggregate_type", pSequenceNo: "sequence_no",
		pSequenceOffset: "sequence_offset", pEventType: "event_type", pEventRevision: "event_revision",
		pPayload: "payload", pMetadata: "metadata", pOccurredAt: "occurred_at", pPartitionKey: "partition_key",
		pGlobalPosition: "global_position", pExpectedVersion: "expected_version",
	}
	if len(rowParams) != nParams || len(want) != nParams {
		t.Fatalf("%d insert binds, %d slots", len(rowParams), nParams)
	}
	for slot, name := range want {
		if rowParams[slot] != name {
			t.Errorf("slot %d is #{%s}, want #{%s}", slot, rowParams[slot], name)
		}
	}
}
