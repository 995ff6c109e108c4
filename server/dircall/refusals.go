package dircall

import (
	"errors"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// BaselineLost is the refusal of an operation on a directory whose
// baseline is lost; nothing was changed.
func BaselineLost() *diag.Error {
	return diag.New(diag.CodeEngineFailed, diag.ReasonBaselineLost, "", nil)
}

// ErrRecordNewer: a commit found the store older than the directory's
// record; MapErr ends it as OutlivedRecord.
var ErrRecordNewer = errors.New("server: the directory's record is newer than the store")

// OutlivedRecord is the refusal of a call on a non-empty directory whose
// record the store outlived (set aside as no record); nothing was changed.
func OutlivedRecord() *diag.Error {
	return diag.New(diag.CodeEngineFailed, diag.ReasonBaselineLost, "The directory's record is newer than the store (the store was restored from an older copy) or was made against another store at the same URL, so local edits cannot be told from others' changes; nothing was changed. Pull the directory: files equal to the notebook's are adopted, differing ones become conflict blocks keeping both texts.", nil)
}

// PathErr maps a refusal of a request path (package rules) to its
// catalogued error; any other error is the file system's.
func PathErr(err error) error {
	switch {
	case errors.Is(err, rules.ErrBadPath):
		return diag.InvalidRequest(diag.ReasonInvalidArgument, "path must be 1 to 4,096 bytes of UTF-8 without U+0000.")
	case errors.Is(err, rules.ErrNoHome):
		return diag.InvalidRequest(diag.ReasonInvalidArgument, "path starts with ~/ but the home directory is unknown.")
	case errors.Is(err, rules.ErrOutsideRoot):
		return diag.InvalidRequest(diag.ReasonPathOutsideRoot, "")
	case errors.Is(err, rules.ErrNotDirectory):
		return diag.InvalidRequest(diag.ReasonPathNotDirectory, "")
	}
	return MapErr(err)
}
