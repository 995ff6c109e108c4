package diag

import (
	"sort"

	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Code is the stable error category of a domain error.
type Code string

const (
	CodeInvalidRequest   Code = "INVALID_REQUEST"
	CodeInvalidContent   Code = "INVALID_CONTENT"
	CodeContentConflict  Code = "CONTENT_CONFLICT"
	CodeReadOnlyPath     Code = "READ_ONLY_PATH"
	CodeRemoteBusy       Code = "REMOTE_BUSY"
	CodeStorageFailure   Code = "STORAGE_FAILURE"
	CodeStorageIntegrity Code = "STORAGE_INTEGRITY"
	CodeEngineFailed     Code = "ENGINE_FAILED"
	CodeRecoveryFailure  Code = "RECOVERY_FAILURE"
)

// Action is the stable token naming the caller's next step.
type Action string

const (
	ActionFixRequest     Action = "FIX_REQUEST"
	ActionPullFirst      Action = "PULL_FIRST"
	ActionFixFiles       Action = "FIX_FILES"
	ActionEditFiles      Action = "EDIT_FILES"
	ActionWriteElsewhere Action = "WRITE_ELSEWHERE"
	ActionRetry          Action = "RETRY"
	ActionCheckStore     Action = "CHECK_STORE"
	ActionRunVerify      Action = "RUN_VERIFY"
	ActionCheckHost      Action = "CHECK_HOST"
	ActionPull           Action = "PULL"
)

// Error is a domain error: everything an agent or a person needs to act.
// Its Error() text is safe to show (no credentials, keys, object IDs or
// private paths); the cause, which may hold such things, is kept for the
// log only (Unwrap).
type Error struct {
	Code      Code
	Reason    string
	Action    Action
	Retryable bool
	Message   string
	Detail    string // ENGINE_FAILED only, from a closed set; "" otherwise
	Files     []FileError
	Recovery  *Recovery // RECOVERY_FAILURE only
	Cause     error     // for the log; never shown to the caller
}

// FileError is one affected file, relative to the request directory.
type FileError struct {
	Path   string
	Reason string
	Ranges []merge.Range
}

// Recovery reports what a failed recovery left behind (RECOVERY_FAILURE
// only). The envelope carries it as it is, its stage scrubbed.
type Recovery struct {
	Stage          string `json:"stage"`
	RemoteAccepted string `json:"remoteAccepted"` // "yes", "no" or "unknown"
	Resynchronized bool   `json:"resynchronized"`
}

func (e *Error) Error() string { return string(e.Code) + " " + e.Reason + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Cause }

// Reason tokens (one level below Code) and file reasons. Stable across releases.
const (
	ReasonInvalidArgument   = "INVALID_ARGUMENT"
	ReasonPathOutsideRoot   = "PATH_OUTSIDE_ROOT"
	ReasonPathNotDirectory  = "PATH_NOT_DIRECTORY"
	ReasonBlankMessage      = "BLANK_MESSAGE"
	ReasonNotPulled         = "NOT_PULLED"
	ReasonInvalidFiles      = "INVALID_FILES"
	ReasonMergeConflict     = "MERGE_CONFLICT"
	ReasonUnresolvedMarkers = "UNRESOLVED_MARKERS"
	ReasonOutsideWritable   = "OUTSIDE_WRITABLE"
	ReasonInsideReadOnly    = "INSIDE_READ_ONLY"
	ReasonRetriesExhausted  = "RETRIES_EXHAUSTED"
	ReasonStoreUnreachable  = "STORE_UNREACHABLE"
	ReasonAccessDenied      = "ACCESS_DENIED"
	ReasonNoCredentials     = "NO_CREDENTIALS"
	ReasonFormatNewer       = "FORMAT_NEWER"
	ReasonAcceptanceUnknown = "ACCEPTANCE_UNKNOWN"
	ReasonCorruptManifest   = "CORRUPT_MANIFEST"
	ReasonCorruptPack       = "CORRUPT_PACK"
	ReasonMissingPack       = "MISSING_PACK"
	ReasonCacheCorrupt      = "CACHE_CORRUPT"
	ReasonLocalIO           = "LOCAL_IO"
	ReasonInternal          = "INTERNAL"
	ReasonResynchronized    = "RESYNCHRONIZED"
	ReasonRecoveryPending   = "RECOVERY_PENDING"
	ReasonGenerationBack    = "GENERATION_REGRESSED"
	ReasonContainsNotebook  = "CONTAINS_NOTEBOOK"
	ReasonBaselineLost      = "BASELINE_LOST"
	ReasonDirectoryNotEmpty = "DIRECTORY_NOT_EMPTY"
	ReasonStoreMismatch     = "STORE_MISMATCH"

	FileInvalidUTF8     = workdir.FileInvalidUTF8
	FileNulByte         = workdir.FileNulByte
	FileSymlink         = workdir.FileSymlink
	FileSpecial         = workdir.FileSpecial
	FileInvalidName     = workdir.FileInvalidName
	FileNameCollision   = workdir.FileNameCollision
	FilePathTooLong     = workdir.FilePathTooLong
	FileConflictMarkers = "CONFLICT_MARKERS"
	FileNoRecord        = string(NoRecord)
	// TEXT_CONFLICT, MODIFY_DELETE and FILE_DIRECTORY come from merge.FileReason;
	// OUTSIDE_WRITABLE and INSIDE_READ_ONLY are also file reasons.
)

// ReasonHistoryUnavailable is the INVALID_REQUEST reason for a generation
// outside the retained history (CLI history commands only).
const ReasonHistoryUnavailable = "HISTORY_UNAVAILABLE"

// ReasonUncommittedChanges refuses a restore or revert that would
// overwrite or delete files holding work no publication has: the files are
// named, with FileLocalEdit (changed since the last pull or commit) or
// FileNeverCommitted (not in the notebook the directory last synced with).
const (
	ReasonUncommittedChanges = "UNCOMMITTED_CHANGES"
	FileLocalEdit            = "LOCAL_EDIT"
	FileNeverCommitted       = "NEVER_COMMITTED"
)

// FileSecret is the INVALID_FILES file reason of a file whose added lines
// hold a recognised credential.
const FileSecret = "SECRET"

// FileSecretInName is the INVALID_FILES file reason of a new file whose
// name, or the name of a directory above it, holds a recognised
// credential. Its path is reported with the credential replaced by
// secrets.Placeholder, the one path of an envelope that is not as it is.
const FileSecretInName = "SECRET_IN_NAME"

// ReasonSecretInMessage is the INVALID_CONTENT reason of a commit whose
// message holds a recognised credential (files is empty: the message is
// not a file).
const ReasonSecretInMessage = "SECRET_IN_MESSAGE"

// NoRecord is the file reason of a conflict block written because the
// file's base is unknown: P cannot tell which accepted version the file
// was made from, so the engine never merges it and one block holds L's
// whole text and the notebook's.
const NoRecord merge.FileReason = "NO_RECORD"

// CatalogRow is one row of the error reference (docs/errors.md is generated
// from Catalog and checked against it by a test).
type CatalogRow struct {
	Code        Code
	Reason      string
	Action      Action
	Retryable   bool
	FileReasons []string
	Meaning     string
}

// Catalog is the complete table of domain errors: the one catalogue of
// tokens. docs/errors.md is generated from it, and the outputSchema both
// tools advertise takes its enums of codes, reasons, actions and file
// reasons from CatalogTokens, so a token the table lacks cannot be emitted
// without a test failing, and one it holds is always valid for a client
// that validates results. To add a reason, add a row (and its default
// message in errmap.go); nothing else lists tokens.
var Catalog = []CatalogRow{
	{CodeInvalidRequest, ReasonInvalidArgument, ActionFixRequest, false, nil, "An input field is missing, unknown, null, of the wrong type, or out of bounds."},
	{CodeInvalidRequest, ReasonPathOutsideRoot, ActionFixRequest, false, nil, "The path resolves outside the workspace root."},
	{CodeInvalidRequest, ReasonPathNotDirectory, ActionFixRequest, false, nil, "The path names something that is not a directory."},
	{CodeInvalidRequest, ReasonBlankMessage, ActionFixRequest, false, nil, "The commit message is empty or only white space."},
	{CodeInvalidRequest, ReasonNotPulled, ActionPullFirst, false, nil, "The directory has never been pulled, so there is no baseline to commit against."},
	{CodeInvalidRequest, ReasonHistoryUnavailable, ActionFixRequest, false, nil, "CLI history commands only (show, diff, restore, revert): the generation is outside the retained history; the message names the oldest retained generation."},
	{CodeInvalidRequest, ReasonUncommittedChanges, ActionFixRequest, false, []string{FileLocalEdit, FileNeverCommitted}, "CLI restore and revert only: they would overwrite or delete files holding uncommitted work (LOCAL_EDIT: changed since the last pull or commit; NEVER_COMMITTED: not in the notebook); nothing was changed. Commit or move the files, or repeat with --force, which keeps a copy of each in the private state and prints where."},
	{CodeInvalidContent, ReasonInvalidFiles, ActionFixFiles, false, []string{FileInvalidUTF8, FileNulByte, FileSymlink, FileSpecial, FileInvalidName, FileNameCollision, FilePathTooLong, FileSecret, FileSecretInName}, "Files that the notebook cannot hold (SECRET: added lines hold a recognised credential; SECRET_IN_NAME: a new file or directory name holds one, and the path is reported with it replaced by `[secret]`; see docs/secrets.md); nothing was published or deleted."},
	{CodeInvalidContent, ReasonSecretInMessage, ActionFixRequest, false, nil, "The commit message holds a recognised credential (see docs/secrets.md); files is empty, and nothing was published or changed. Write the message without it."},
	{CodeContentConflict, ReasonMergeConflict, ActionEditFiles, false, []string{string(merge.TextConflict), string(merge.ModifyDelete), string(merge.FileDirectory), string(merge.Unresolved), FileNoRecord}, "Concurrent changes overlap; conflict blocks were written into the files (CONFLICT_MARKERS: the file still holds earlier blocks, kept as they are; the remote change is merged once they are resolved; NO_RECORD: the directory has no sync record, or P cannot tell which version the file was edited from, so one block holds the file's whole text and the notebook's)."},
	{CodeContentConflict, ReasonUnresolvedMarkers, ActionEditFiles, false, []string{FileConflictMarkers}, "Files still hold complete conflict blocks; resolve them before committing."},
	{CodeReadOnlyPath, ReasonOutsideWritable, ActionWriteElsewhere, false, []string{ReasonOutsideWritable}, "Changes outside the writable set were refused and reset."},
	{CodeReadOnlyPath, ReasonInsideReadOnly, ActionWriteElsewhere, false, []string{ReasonInsideReadOnly}, "Changes inside the read-only set were refused and reset."},
	{CodeRemoteBusy, ReasonRetriesExhausted, ActionRetry, true, nil, "Other writers won every publication attempt; nothing was lost, retry."},
	{CodeStorageFailure, ReasonStoreUnreachable, ActionRetry, true, nil, "The store did not answer or failed; retry later."},
	{CodeStorageFailure, ReasonAccessDenied, ActionCheckStore, false, nil, "The store refused the credentials or the bucket."},
	{CodeStorageFailure, ReasonNoCredentials, ActionCheckStore, false, nil, "No usable credentials were found for the S3 store (none are set, or the configured ones could not be loaded: an unreachable instance role, or a profile using SSO, aws login or MFA, which slivingdoc does not read itself), so nothing was sent: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile of ~/.aws/credentials or ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move those files); for an SSO profile, name one whose credential_process is `aws configure export-credentials --profile NAME --format process` (docs/cli.md)."},
	{CodeStorageFailure, ReasonAcceptanceUnknown, ActionRetry, true, nil, "The publication's outcome could not be decided; a retry is safe and never duplicates changes."},
	{CodeStorageFailure, ReasonFormatNewer, ActionCheckHost, false, nil, "The store was written by a newer slivingdoc, in a format version this one does not read (the message names both); nothing was changed. Upgrade slivingdoc on this host."},
	{CodeStorageFailure, ReasonIncompatibleStore, ActionCheckStore, false, nil, "The store stopped enforcing conditional writes when its compatibility was re-proved (at startup this is the INCOMPATIBLE_STORE diagnostic instead)."},
	{CodeStorageIntegrity, ReasonCorruptManifest, ActionRunVerify, false, nil, "The current manifest is malformed."},
	{CodeStorageIntegrity, ReasonCorruptPack, ActionRunVerify, false, nil, "A pack does not match its checksum or format."},
	{CodeStorageIntegrity, ReasonMissingPack, ActionRunVerify, false, nil, "A pack the manifest references is missing."},
	{CodeStorageIntegrity, ReasonGenerationBack, ActionRunVerify, false, nil, "The store's generation is lower than one this host already saw (its `current` was restored from an older copy or deleted); nothing in the directory was changed. See docs/operations.md to restore a backup deliberately."},
	{CodeStorageIntegrity, ReasonCacheCorrupt, ActionRunVerify, false, nil, "The local object cache is corrupt and could not be repaired (damaged packs are normally dropped and fetched again)."},
	{CodeEngineFailed, ReasonLocalIO, ActionCheckHost, true, nil, "A local file operation failed (see detail)."},
	{CodeEngineFailed, ReasonInternal, ActionCheckHost, false, nil, "An unexpected failure; the log record with the diagnosticId has the cause."},
	{CodeRecoveryFailure, ReasonResynchronized, ActionPull, true, nil, "An operation failed after it began rewriting the directory; the directory was resynchronised."},
	{CodeRecoveryFailure, ReasonRecoveryPending, ActionPull, true, nil, "An earlier operation was interrupted; the next call resynchronises first."},
	{CodeInvalidRequest, ReasonDirectoryNotEmpty, ActionFixRequest, false, nil, "CLI pull without a path argument: the working directory holds files but has no sync record here; name the directory to adopt its files (differing files become conflict blocks keeping both texts), or pull into an empty directory."},
	{CodeInvalidRequest, ReasonContainsNotebook, ActionFixRequest, false, nil, "The path would become a notebook directory containing an existing one of the same store (named, relative to the path); use that one, or a directory outside it."},
	{CodeEngineFailed, ReasonBaselineLost, ActionCheckHost, false, nil, "The directory was pulled before but its private baseline is missing or damaged, or content it names is gone from the cache and the store, so local edits cannot be told from others' changes; nothing was changed. Pull the directory: files equal to the notebook's are adopted, differing ones become conflict blocks keeping both texts."},
	{CodeInvalidRequest, ReasonStoreMismatch, ActionFixRequest, false, nil, "The directory (or the notebook directory it lies in) belongs to another store than the one this call names (the message names both); nothing was changed. Give the directory's own store, or no store setting, or use another directory."},
}

// Tokens are the distinct tokens of the catalogue, each list sorted.
type Tokens struct {
	Codes       []string
	Reasons     []string
	Actions     []string
	FileReasons []string
}

// CatalogTokens collects the tokens of Catalog: the enums of the
// advertised outputSchema.
func CatalogTokens() Tokens {
	var codes, reasons, actions, files []string
	for _, r := range Catalog {
		codes = append(codes, string(r.Code))
		reasons = append(reasons, r.Reason)
		actions = append(actions, string(r.Action))
		files = append(files, r.FileReasons...)
	}
	return Tokens{Codes: sortedSet(codes), Reasons: sortedSet(reasons), Actions: sortedSet(actions), FileReasons: sortedSet(files)}
}

func sortedSet(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
