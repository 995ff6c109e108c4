package mcpserver

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// The catalog rows that need a store to misbehave in ways the file store
// cannot (cmd/slivingdoc's black-box rows skip them) run here: the real
// engine over memstore.Mem with scripted faults, behind the adapter, driven
// by the go-sdk client.

func memEngine(t *testing.T, mem *memstore.Mem) (*server.Engine, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "notes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	eng, err := server.New(server.Config{
		Store:         mem,
		PrivateRoot:   filepath.Join(base, "private"),
		WorkspaceRoot: dir,
		DefaultDir:    dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, dir
}

func callTool(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (map[string]any, string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return structured(t, res), text(t, res), res.IsError
}

func wantCatalogRow(t *testing.T, s map[string]any, txt string, code diag.Code, reason string) {
	t.Helper()
	row := diag.RowFor(code, reason)
	if row.Reason != reason {
		t.Fatalf("no catalog row %s/%s", code, reason)
	}
	if s["code"] != string(code) || s["reason"] != reason || s["action"] != string(row.Action) || s["retryable"] != row.Retryable {
		t.Fatalf("got %v, want row %+v\n%s", s, row, txt)
	}
}

func TestStoreFaultAcceptanceUnknown(t *testing.T) {
	mem := memstore.New()
	eng, dir := memEngine(t, mem)
	cs, _ := connect(t, eng)
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, txt, isErr := callTool(t, cs, ToolPull, nil); isErr {
		t.Fatal(txt)
	}
	// The first commit to a store also names it (remote/storeid.go): one
	// read more than any later commit.
	write("0\n")
	if _, txt, isErr := callTool(t, cs, ToolCommit, map[string]any{"message": "zero"}); isErr {
		t.Fatal(txt)
	}
	// A clean commit tells how many reads precede the replace of `current`.
	write("a\n")
	before := mem.Calls(memstore.OpGet)
	if _, txt, isErr := callTool(t, cs, ToolCommit, map[string]any{"message": "first"}); isErr {
		t.Fatal(txt)
	}
	reads := mem.Calls(memstore.OpGet) - before
	// Next commit: the replace is lost in flight, and the re-read that
	// could settle the outcome fails.
	write("a\nb\n")
	mem.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: "current", Before: remote.ErrAmbiguous})
	for range reads {
		mem.Inject(memstore.Fault{Op: memstore.OpGet, KeyPrefix: "current"}) // pass through
	}
	mem.Inject(memstore.Fault{Op: memstore.OpGet, KeyPrefix: "current", Before: remote.ErrUnavailable})
	s, txt, isErr := callTool(t, cs, ToolCommit, map[string]any{"message": "second"})
	if !isErr {
		t.Fatalf("commit succeeded: %s", txt)
	}
	wantCatalogRow(t, s, txt, diag.CodeStorageFailure, diag.ReasonAcceptanceUnknown)
	if u := mem.Unfired(); len(u) > 0 {
		t.Fatalf("faults never fired: %v", u)
	}
}

func TestStoreFaultIncompatibleStore(t *testing.T) {
	mem := memstore.New()
	mem.IgnorePreconditions(true)
	eng, _ := memEngine(t, mem)
	cs, _ := connect(t, eng)
	s, txt, isErr := callTool(t, cs, ToolPull, nil)
	if !isErr {
		// A fresh private root holds no verdict, so this call must prove
		// the store and refuse it.
		t.Fatalf("a pull on a store without conditional writes succeeded: %s", txt)
	}
	wantCatalogRow(t, s, txt, diag.CodeStorageFailure, diag.ReasonIncompatibleStore)
}

// onRecovery is a log handler that runs fn (once) when the engine reports
// a failure after local changes began: an error record with a stage. The
// engine logs it before it tries to resynchronise, so fn can remove the
// fault and make the fault transient.
type onRecovery struct {
	once *sync.Once
	fn   func()
}

func (h onRecovery) Enabled(context.Context, slog.Level) bool { return true }
func (h onRecovery) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h onRecovery) WithGroup(string) slog.Handler            { return h }
func (h onRecovery) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "stage" {
			h.once.Do(h.fn)
			return false
		}
		return true
	})
	return nil
}

// A pull whose rewrite fails midway on a fault that is gone by the time
// the engine resynchronises reports RECOVERY_FAILURE/RESYNCHRONIZED.
func TestTransientRewriteFaultResynchronizes(t *testing.T) {
	mem := memstore.New()
	other, otherDir := memEngine(t, mem)
	ctx := context.Background()
	write := func(dir, name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Pull(ctx, ""); err != nil {
		t.Fatal(err)
	}
	write(otherDir, "x/1.md", "1\n")
	write(otherDir, "x/2.md", "2\n")
	if _, err := other.Commit(ctx, "", "base"); err != nil {
		t.Fatal(err)
	}

	base := t.TempDir()
	dir := filepath.Join(base, "notes")
	victim := filepath.Join(dir, "x", "2.md")
	chattr := func(flag string) error { return exec.Command("chattr", flag, victim).Run() }
	eng, err := server.New(server.Config{
		Store: mem, PrivateRoot: filepath.Join(base, "private"), WorkspaceRoot: dir, DefaultDir: dir,
		Logger: slog.New(onRecovery{once: &sync.Once{}, fn: func() { chattr("-i") }}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, eng)
	if _, txt, isErr := callTool(t, cs, ToolPull, nil); isErr {
		t.Fatal(txt)
	}
	write(otherDir, "x/1.md", "1 changed\n")
	write(otherDir, "x/2.md", "2 changed\n")
	if _, err := other.Commit(ctx, "", "change"); err != nil {
		t.Fatal(err)
	}
	if err := chattr("+i"); err != nil {
		t.Skipf("chattr +i unavailable (%v): the test needs a write the OS refuses", err)
	}
	t.Cleanup(func() { chattr("-i") })

	s, txt, isErr := callTool(t, cs, ToolPull, nil)
	if !isErr {
		t.Fatalf("the pull met no fault: %s", txt)
	}
	wantCatalogRow(t, s, txt, diag.CodeRecoveryFailure, diag.ReasonResynchronized)
	rec, _ := s["recovery"].(map[string]any)
	if rec == nil || rec["resynchronized"] != true || rec["stage"] == "" {
		t.Fatalf("recovery report %v", s["recovery"])
	}
	for name, want := range map[string]string{"x/1.md": "1 changed\n", "x/2.md": "2 changed\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s after resynchronisation: %q, want %q", name, got, want)
		}
	}
}
