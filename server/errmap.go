package server

import (
	"errors"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// mapErr turns any failure into a domain error (diag.Map, the one mapping
// of lower-level failures), after the one failure that is the engine's
// own: a commit that found the store older than the directory's record
// (errRecordNewer) is BASELINE_LOST, as outlivedRecord says. A domain
// error already built passes through unchanged, as in diag.Map.
func mapErr(err error) *diag.Error {
	var de *diag.Error
	if !errors.As(err, &de) && errors.Is(err, errRecordNewer) {
		return outlivedRecord()
	}
	return diag.Map(err)
}
