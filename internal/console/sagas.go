package console

import (
	"net/http"

	"github.com/tidemarkdb/tidemark/core/saga"
)

// sagaListLimit bounds the instances the Sagas page lists.
const sagaListLimit = 100

// sagasData is the Sagas page: every saga type's counts and pending
// deadlines, the deadline lock, and the first instances.
type sagasData struct {
	Status    saga.Status
	Instances []saga.Listed
	Limit     int
}

// sagas reads what `tidemark sagas status` and `list` read; it needs no
// saga declaration and only reads.
func (s *Server) sagas(r *http.Request) (any, error) {
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	e := s.op.Engine()
	st, err := saga.ReadStatus(ctx, e)
	if err != nil {
		return nil, err
	}
	list, err := saga.List(ctx, e, r.URL.Query().Get("type"), sagaListLimit)
	return sagasData{Status: st, Instances: list, Limit: sagaListLimit}, err
}
