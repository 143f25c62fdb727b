package ingest

import (
	"net/http"

	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/store"
	"github.com/labstack/echo/v4"
)

// EnableReprocess adds POST /documents/{log_id}/reprocess: a client runs
// one of its finished (or failed) documents again with the current template
// version, typically after fixing its template; the new outcome arrives by
// webhook under a new webhook-id. A request takes one of the client's
// uploads (INTAKE_UPLOAD_RATE_LIMIT): it costs an extraction as an upload
// does, so a client over its rate cannot reprocess at will. Operators'
// reprocessing (ops console, intakectl reprocess) is not limited.
func (s *Server) EnableReprocess(st *store.Store) {
	if st == nil {
		panic("ingest.EnableReprocess: nil store")
	}
	s.reprocessRoutes(s.handleReprocess(st))
}

func (s *Server) handleReprocess(st *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		cl := clientFrom(c)
		d, err := st.DocumentByLogID(ctx, cl.ID, c.Param("log_id"))
		if err != nil {
			return err // another client's document is 404, as for GET
		}
		if _, err := lifecycle.Reprocess(ctx, st, s.cfg.SubjectPrefix, d, "client:"+cl.ID); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, ack{LogID: d.LogID, Status: "received"})
	}
}
