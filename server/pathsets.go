package server

import "github.com/slivingdoc/slivingdoc/server/rules"

// pathReasons maps a path set's refusal (package server/rules) to its
// READ_ONLY_PATH file reason; Allowed maps to "".
var pathReasons = map[rules.Refusal]string{
	rules.InsideReadOnly:  ReasonInsideReadOnly,
	rules.OutsideWritable: ReasonOutsideWritable,
}
