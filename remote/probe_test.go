package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

func TestProbeAcceptsConditionalStores(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	if err := remote.Probe(ctx, m); err != nil {
		t.Fatalf("Probe(mem) = %v", err)
	}
	f, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Probe(ctx, f); err != nil {
		t.Fatalf("Probe(file) = %v", err)
	}
	if objs, _ := m.List(ctx, ""); len(objs) != 0 {
		t.Fatalf("the probe left %v behind", objs)
	}
}

func TestProbeRefusesStoreWithoutPreconditions(t *testing.T) {
	m := memstore.New()
	m.IgnorePreconditions(true)
	err := remote.Probe(context.Background(), m)
	if !errors.Is(err, remote.ErrIncompatible) {
		t.Fatalf("Probe = %v, want ErrIncompatible", err)
	}
	var v *remote.Violation
	if !errors.As(err, &v) || v.Guarantee != remote.GuaranteeCreateExclusive {
		t.Fatalf("Probe = %v, want the violated guarantee %q named", err, remote.GuaranteeCreateExclusive)
	}
	if objs, _ := m.List(context.Background(), remote.ProbePrefix); len(objs) != 0 {
		t.Fatalf("a failed probe left %v behind", objs)
	}
}

// Each guarantee is checked: a store that breaks only one of them is
// refused, naming it.
func TestProbeNamesEachBrokenGuarantee(t *testing.T) {
	stale := func(ctx context.Context, s remote.Store, key string, data []byte, etag string) (string, error) {
		return s.ReplaceIfMatch(ctx, key, data, mustETag(ctx, s, key)) // whatever ETag it is given
	}
	lying := func(ctx context.Context, s remote.Store, key string, data []byte, etag string) (string, error) {
		return "", remote.ErrPrecondition // refuses even the right ETag
	}
	for _, tc := range []struct {
		guarantee string
		replace   func(ctx context.Context, s remote.Store, key string, data []byte, etag string) (string, error)
	}{
		{remote.GuaranteeReplaceStale, stale},
		{remote.GuaranteeReplace, lying},
	} {
		s := &replaceHook{Store: memstore.New(), replace: tc.replace}
		var v *remote.Violation
		if err := remote.Probe(context.Background(), s); !errors.As(err, &v) || v.Guarantee != tc.guarantee {
			t.Errorf("Probe = %v, want a violation of %q", err, tc.guarantee)
		}
	}
}

type replaceHook struct {
	remote.Store
	replace func(ctx context.Context, s remote.Store, key string, data []byte, etag string) (string, error)
}

func (h *replaceHook) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return h.replace(ctx, h.Store, key, data, etag)
}

func mustETag(ctx context.Context, s remote.Store, key string) string {
	_, etag, _ := s.Get(ctx, key)
	return etag
}

// A store that cannot be reached is not "incompatible": the startup
// diagnostic must say which.
func TestProbeReportsStoreErrorsAsSuch(t *testing.T) {
	m := memstore.New()
	m.Inject(memstore.Fault{Op: memstore.OpCreate, Before: remote.ErrUnavailable})
	defer memstore.AssertFaultsFired(t, m)
	err := remote.Probe(context.Background(), m)
	if !errors.Is(err, remote.ErrUnavailable) || errors.Is(err, remote.ErrIncompatible) {
		t.Fatalf("Probe = %v, want ErrUnavailable and not ErrIncompatible", err)
	}
}
