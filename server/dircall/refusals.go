package dircall

import (
	"errors"

	"github.com/slivingdoc/slivingdoc/server/diag"
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
