package diag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/noinit"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// This file is the one place where failures become domain errors: remote
// and cas sentinels, OS errors and contexts map to *Error with the code,
// action and retryable verdict of their Catalog row. Messages are fixed
// text (never a path in P, a key, an ID or a credential); the original
// error rides along as Cause for the log only. The engine adds the one
// failure of its own that it maps (a directory's record newer than the
// store) before it calls Map.

// Closed set of ENGINE_FAILED/LOCAL_IO details (Error.Detail).
const (
	DetailDiskFull       = "disk full"
	DetailQuota          = "disk quota exceeded"
	DetailPermission     = "permission denied"
	DetailReadOnlyFS     = "read-only file system"
	DetailTooManyFiles   = "too many open files"
	DetailIO             = "input/output error"
	DetailNameTooLong    = "file name too long"
	DetailVanished       = "a file or directory vanished during the operation"
	DetailChangedDuring  = "a file changed during the operation"
	DetailLocked         = "the directory is locked by another operation"
	DetailNotEmptyTarget = "a directory is in the way of a file"
)

// LocalIODetails lists every Detail value, for the error reference.
var LocalIODetails = []string{
	DetailDiskFull, DetailQuota, DetailPermission, DetailReadOnlyFS, DetailTooManyFiles,
	DetailIO, DetailNameTooLong, DetailVanished, DetailChangedDuring, DetailLocked, DetailNotEmptyTarget,
}

// ReasonIncompatibleStore is the STORAGE_FAILURE reason for a store that
// failed the compatibility probe after startup (at startup, the adapters
// report it as their own diagnostic: errors.Is(err, remote.ErrIncompatible)).
const ReasonIncompatibleStore = "INCOMPATIBLE_STORE"

// defaultMessages is each reason's default message, built on the first
// error reported: a package-level map literal is built before main in
// every process, and most never report one.
func defaultMessages() map[string]string { return defaultMessagesOnce.Get(makeDefaultMessages) }

var defaultMessagesOnce noinit.Lazy[map[string]string]

func makeDefaultMessages() map[string]string {
	return map[string]string{
		ReasonInvalidArgument:    "The request has an invalid argument.",
		ReasonPathOutsideRoot:    "The path resolves outside the workspace root.",
		ReasonPathNotDirectory:   "The path names something that is not a directory.",
		ReasonBlankMessage:       "The commit message is empty or only white space.",
		ReasonNotPulled:          "This directory has not been pulled yet; pull it before committing.",
		ReasonHistoryUnavailable: "The generation is outside the retained history.",
		ReasonUncommittedChanges: "Files holding uncommitted work would be overwritten or deleted; nothing was changed.",
		ReasonInvalidFiles:       "Some files cannot be part of the notebook; nothing was published or deleted.",
		ReasonSecretInMessage:    "The commit message holds what looks like a credential; write it without the credential. Nothing was published or changed.",
		ReasonMergeConflict:      "Concurrent changes overlap; resolve the conflict blocks written into the files, then commit.",
		ReasonUnresolvedMarkers:  "Files still hold complete conflict blocks; resolve them before committing.",
		ReasonOutsideWritable:    "Changes outside the writable set were refused and reset to the accepted content; nothing was published.",
		ReasonInsideReadOnly:     "Changes inside the read-only set were refused and reset to the accepted content; nothing was published.",
		ReasonRetriesExhausted:   "Other writers won every publication attempt; nothing was lost, retry.",
		ReasonStoreUnreachable:   "The store did not answer or failed; retry later.",
		ReasonAccessDenied:       "The store refused the credentials or the bucket.",
		ReasonNoCredentials:      "No usable AWS credentials were found (none are set, or the configured ones could not be loaded), so nothing was sent to the store. Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile in ~/.aws/credentials or ~/.aws/config.",
		ReasonAcceptanceUnknown:  "The publication's outcome could not be decided; a retry is safe and never duplicates changes.",
		ReasonCorruptManifest:    "The store's current manifest is malformed.",
		ReasonCorruptPack:        "A pack in the store does not match its checksum or format.",
		ReasonMissingPack:        "A pack the manifest references is missing from the store.",
		ReasonCacheCorrupt:       "The local object cache is corrupt or incomplete.",
		ReasonLocalIO:            "A local file operation failed.",
		ReasonInternal:           "An unexpected failure; the log record with the diagnostic ID has the cause.",
		ReasonResynchronized:     "The operation failed after it began rewriting the directory; the directory was resynchronised with the accepted notebook.",
		ReasonRecoveryPending:    "An interrupted operation left the directory to be resynchronised; the next call does it first.",
		ReasonIncompatibleStore:  "The store does not enforce the conditional writes the notebook needs.",
		ReasonFormatNewer:        "The store was written by a newer slivingdoc, in a format this one does not read; nothing was changed. Upgrade slivingdoc.",
		ReasonGenerationBack:     "The store's generation went backwards (current restored from an older copy or deleted); nothing was changed.",
		ReasonContainsNotebook:   "The directory would contain an existing notebook directory of the same store.",
		ReasonStoreMismatch:      "The directory belongs to another store than the one this call names; nothing was changed.",
		ReasonBaselineLost:       "This directory was pulled before, but its private baseline is missing or damaged, so local edits cannot be told from others' changes; nothing was changed. Pull it: files equal to the notebook's are adopted and differing ones become conflict blocks keeping both texts.",
		ReasonDirectoryNotEmpty:  "The working directory holds files but was never pulled here (or its record is gone); nothing was changed. Name it to adopt its files (`slivingdoc pull .`: differing files become conflict blocks keeping both texts), or pull into an empty directory.",
	}
}

// New builds the *Error of one Catalog row (code and reason decide
// action and retryable), with the row's default message unless msg is set.
func New(code Code, reason, msg string, cause error) *Error {
	e := &Error{Code: code, Reason: reason, Message: msg, Cause: cause, Files: []FileError{}}
	if e.Message == "" {
		e.Message = defaultMessages()[reason]
	}
	for _, row := range Catalog {
		if row.Code == code && row.Reason == reason {
			e.Action, e.Retryable = row.Action, row.Retryable
			return e
		}
	}
	// Unreachable for the catalogue's tokens (a test walks every row),
	// but never leave the caller without a next step.
	e.Action = ActionCheckHost
	return e
}

// InvalidRequest is New for an INVALID_REQUEST reason, without cause.
func InvalidRequest(reason, msg string) *Error {
	return New(CodeInvalidRequest, reason, msg, nil)
}

// Map turns any failure into a domain error. It is total: an unknown
// failure is ENGINE_FAILED/INTERNAL with the cause kept for the log.
func Map(err error) *Error {
	var de *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &de):
		return de
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return New(CodeStorageFailure, ReasonStoreUnreachable, "The request was cancelled or timed out.", err)
	case errors.Is(err, remote.ErrLostRace):
		return New(CodeRemoteBusy, ReasonRetriesExhausted, "", err)
	case errors.Is(err, remote.ErrAmbiguous):
		return New(CodeStorageFailure, ReasonAcceptanceUnknown, "", err)
	case errors.Is(err, remote.ErrRateLimited):
		// After ErrAmbiguous: a refused write after an ambiguous one
		// leaves the outcome unknown. Alone it is contention, not a
		// failure: the store limits how often one name is written (R2,
		// GCS), and nothing was applied.
		return New(CodeRemoteBusy, ReasonRetriesExhausted, "The store refused writes to the notebook as too frequent on every attempt; nothing was lost, retry.", err)
	case errors.Is(err, remote.ErrNoCredentials): // before ErrAccessDenied, which it refines
		return New(CodeStorageFailure, ReasonNoCredentials, "", err)
	case errors.Is(err, remote.ErrAccessDenied):
		return New(CodeStorageFailure, ReasonAccessDenied, "", err)
	case errors.Is(err, remote.ErrIncompatible):
		return New(CodeStorageFailure, ReasonIncompatibleStore, "", err)
	case errors.Is(err, remote.ErrFormatNewer):
		return New(CodeStorageFailure, ReasonFormatNewer, formatNewerMessage(err), err)
	case errors.Is(err, remote.ErrGenerationRegressed):
		return New(CodeStorageIntegrity, ReasonGenerationBack, "", err)
	case errors.Is(err, remote.ErrCorruptStoreID):
		// The object beside `current` that names the store: a manifest
		// of the store too (docs/storage.md §2A).
		return New(CodeStorageIntegrity, ReasonCorruptManifest, "The store's store-id object is malformed; run verify (finding STORE_ID_CORRUPT).", err)
	case errors.Is(err, remote.ErrIntegrity):
		return New(CodeStorageIntegrity, ReasonCorruptManifest, "", err)
	case errors.Is(err, remote.ErrUnavailable), errors.Is(err, remote.ErrPrecondition):
		return New(CodeStorageFailure, ReasonStoreUnreachable, "", err)
	case errors.Is(err, remote.ErrNotFound):
		return New(CodeStorageIntegrity, ReasonMissingPack, "", err)
	case errors.Is(err, cas.ErrCorrupt), errors.Is(err, cas.ErrNotFound):
		return New(CodeStorageIntegrity, ReasonCacheCorrupt, "", err)
	}
	if d, ok := localDetail(err); ok {
		e := New(CodeEngineFailed, ReasonLocalIO, "", err)
		if d != "" {
			e.Detail = d
			e.Message = "A local file operation failed: " + d + "."
		}
		return e
	}
	return New(CodeEngineFailed, ReasonInternal, "", err)
}

// MapProbe maps a failure of the store probe. The probe writes and
// deletes a disposable key and never touches `current`, so an ambiguous
// reply there is the store failing, not a publication whose outcome is
// unknown: read-only commands (status, log, show, diff, pull) that probe
// first must not say ACCEPTANCE_UNKNOWN when nothing could be published.
func MapProbe(err error) *Error {
	if errors.Is(err, remote.ErrAmbiguous) && !errors.Is(err, remote.ErrIncompatible) {
		return New(CodeStorageFailure, ReasonStoreUnreachable, "The store failed while its guarantees were being checked; nothing was published. Retry later.", err)
	}
	return Map(err)
}

// MapPack maps a failure to fetch or store one pack: the manifest itself
// was fine, so integrity failures are the pack's.
func MapPack(err error) *Error {
	switch {
	case errors.Is(err, remote.ErrNotFound):
		return New(CodeStorageIntegrity, ReasonMissingPack, "", err)
	case errors.Is(err, remote.ErrIntegrity), errors.Is(err, cas.ErrCorrupt):
		return New(CodeStorageIntegrity, ReasonCorruptPack, "", err)
	}
	return Map(err)
}

// localDetail classifies an OS failure into the closed detail set.
func localDetail(err error) (string, bool) {
	var errno syscall.Errno
	isOS := errors.As(err, &errno)
	var pe *fs.PathError
	isOS = isOS || errors.As(err, &pe)
	switch {
	case errors.Is(err, workdir.ErrChangedDuringScan):
		return DetailChangedDuring, true
	case errors.Is(err, pstate.ErrLocked):
		return DetailLocked, true
	case errors.Is(err, syscall.ENOSPC):
		return DetailDiskFull, true
	case errors.Is(err, syscall.EDQUOT):
		return DetailQuota, true
	case errors.Is(err, syscall.EROFS):
		return DetailReadOnlyFS, true
	case errors.Is(err, fs.ErrPermission):
		return DetailPermission, true
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return DetailTooManyFiles, true
	case errors.Is(err, syscall.EIO):
		return DetailIO, true
	case errors.Is(err, syscall.ENAMETOOLONG):
		return DetailNameTooLong, true
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EISDIR):
		return DetailNotEmptyTarget, true
	case errors.Is(err, fs.ErrNotExist):
		return DetailVanished, true
	}
	if isOS {
		// An OS failure outside the closed set: LOCAL_IO without detail;
		// the log has the cause.
		return "", true
	}
	return "", false
}

// formatNewerMessage names the store's format version and the newest this
// build reads, so the person at the host knows what to upgrade to.
func formatNewerMessage(err error) string {
	var fv *remote.FormatVersionError
	if !errors.As(err, &fv) {
		return ""
	}
	return fmt.Sprintf("The store is in format version %d, written by a newer slivingdoc; this one reads versions 1 to %d. Nothing was changed. Upgrade slivingdoc.", fv.Version, fv.Newest)
}
