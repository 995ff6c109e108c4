package server

import "github.com/slivingdoc/slivingdoc/merge"

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

// Recovery reports what a failed recovery left behind.
type Recovery struct {
	Stage          string
	RemoteAccepted string // "yes", "no" or "unknown"
	Resynchronized bool
}

func (e *Error) Error() string { return string(e.Code) + " " + e.Reason + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Cause }
