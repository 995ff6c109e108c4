package server

import (
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// pathReasons maps a path set's refusal (package server/rules) to its
// READ_ONLY_PATH file reason; Allowed maps to "".
var pathReasons = map[rules.Refusal]string{
	rules.InsideReadOnly:  diag.ReasonInsideReadOnly,
	rules.OutsideWritable: diag.ReasonOutsideWritable,
}
