package diag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Every catalog row builds a complete envelope with its own action and
// retryable verdict and a message of its own.
func TestCatalogRowsBuild(t *testing.T) {
	seen := map[string]bool{}
	for _, row := range Catalog {
		key := string(row.Code) + "/" + row.Reason
		if seen[key] {
			t.Errorf("duplicate row %s", key)
		}
		seen[key] = true
		de := New(row.Code, row.Reason, "", nil)
		if de.Action != row.Action || de.Retryable != row.Retryable || de.Message == "" || de.Files == nil {
			t.Errorf("%s: built %+v", key, de)
		}
	}
}

func TestMap(t *testing.T) {
	pathErr := func(errno syscall.Errno) error {
		return &fs.PathError{Op: "write", Path: "/private/secret/x", Err: errno}
	}
	for _, c := range []struct {
		err    error
		code   Code
		reason string
		detail string
	}{
		{fmt.Errorf("x: %w", remote.ErrLostRace), CodeRemoteBusy, ReasonRetriesExhausted, ""},
		{fmt.Errorf("x: %w: %w", remote.ErrAmbiguous, remote.ErrUnavailable), CodeStorageFailure, ReasonAcceptanceUnknown, ""},
		{remote.ErrUnavailable, CodeStorageFailure, ReasonStoreUnreachable, ""},
		// A per-name rate limit (R2, GCS) is contention, never an unreachable store.
		{fmt.Errorf("x: upload pack: %w", remote.ErrRateLimited), CodeRemoteBusy, ReasonRetriesExhausted, ""},
		{fmt.Errorf("x: %w: %w", remote.ErrLostRace, remote.ErrRateLimited), CodeRemoteBusy, ReasonRetriesExhausted, ""},
		{fmt.Errorf("x: %w: the replace failed (%w)", remote.ErrAmbiguous, remote.ErrRateLimited), CodeStorageFailure, ReasonAcceptanceUnknown, ""},
		{remote.ErrAccessDenied, CodeStorageFailure, ReasonAccessDenied, ""},
		{fmt.Errorf("x: %w: %w", remote.ErrNoCredentials, errors.New("get identity")), CodeStorageFailure, ReasonNoCredentials, ""},
		{remote.ErrIntegrity, CodeStorageIntegrity, ReasonCorruptManifest, ""},
		{remote.ErrIncompatible, CodeStorageFailure, ReasonIncompatibleStore, ""},
		{fmt.Errorf("read current: %w", &remote.FormatVersionError{Version: 4, Newest: 3}), CodeStorageFailure, ReasonFormatNewer, ""},
		{cas.ErrCorrupt, CodeStorageIntegrity, ReasonCacheCorrupt, ""},
		{context.Canceled, CodeStorageFailure, ReasonStoreUnreachable, ""},
		{pathErr(syscall.ENOSPC), CodeEngineFailed, ReasonLocalIO, DetailDiskFull},
		{pathErr(syscall.EACCES), CodeEngineFailed, ReasonLocalIO, DetailPermission},
		{pathErr(syscall.EROFS), CodeEngineFailed, ReasonLocalIO, DetailReadOnlyFS},
		{pathErr(syscall.EMFILE), CodeEngineFailed, ReasonLocalIO, DetailTooManyFiles},
		{pathErr(syscall.EXDEV), CodeEngineFailed, ReasonLocalIO, ""},
		{errors.New("something else"), CodeEngineFailed, ReasonInternal, ""},
	} {
		de := Map(c.err)
		if de.Code != c.code || de.Reason != c.reason || de.Detail != c.detail {
			t.Errorf("%v: got %s/%s %q", c.err, de.Code, de.Reason, de.Detail)
		}
		if !errors.Is(de, c.err) {
			t.Errorf("%v: cause not kept", c.err)
		}
		if strings.Contains(de.Error(), "/private/secret") {
			t.Errorf("%v: message leaks a path: %s", c.err, de.Error())
		}
	}
	if MapPack(remote.ErrIntegrity).Reason != ReasonCorruptPack || MapPack(remote.ErrNotFound).Reason != ReasonMissingPack {
		t.Error("pack failures")
	}
	for _, d := range LocalIODetails {
		if d == "" {
			t.Error("empty detail in the closed set")
		}
	}
}
