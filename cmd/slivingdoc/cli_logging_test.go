package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// records parses slog's key=value lines into maps (values unquoted only
// where simple; enough for the keys asserted here).
func records(t *testing.T, out string) []map[string]string {
	t.Helper()
	var recs []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		rec := map[string]string{}
		for line != "" {
			k, rest, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("not key=value: %q", line)
			}
			var v string
			if strings.HasPrefix(rest, `"`) {
				end := 1
				for end < len(rest) && (rest[end] != '"' || rest[end-1] == '\\') {
					end++
				}
				v, rest = rest[1:end], rest[min(end+1, len(rest)):]
			} else {
				v, rest, _ = strings.Cut(rest, " ")
			}
			rec[k] = v
			line = strings.TrimLeft(rest, " ")
		}
		recs = append(recs, rec)
	}
	return recs
}

// LOG_LEVEL sets a default level and per-module levels; the module comes
// from the logger's "module" attribute or the record's own.
func TestLoggerModuleLevels(t *testing.T) {
	t.Setenv("LOG_LEVEL", "warn, remote=debug")
	var buf bytes.Buffer
	log := newLogger(&buf)
	log.With("module", "remote").Debug("remote detail")
	log.With("module", "server").Info("server info")
	log.With("module", "server").Warn("server warn")
	log.Debug("record module", "module", "remote")
	log.Info("no module")
	got := records(t, buf.String())
	var msgs []string
	for _, r := range got {
		msgs = append(msgs, r["msg"])
	}
	if want := []string{"remote detail", "server warn", "record module"}; strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Fatalf("records %q, want %q\n%s", msgs, want, buf.String())
	}
	if got[0]["module"] != "remote" || got[0]["level"] != "DEBUG" || got[1]["module"] != "server" || got[1]["level"] != "WARN" {
		t.Fatalf("attributes: %v", got)
	}
}

func TestLoggerBadLevel(t *testing.T) {
	t.Setenv("LOG_LEVEL", "loud,remote=")
	var buf bytes.Buffer
	log := newLogger(&buf)
	log.Debug("hidden")
	log.Info("shown")
	got := records(t, buf.String())
	if len(got) != 2 || got[0]["level"] != "WARN" || got[0]["module"] != "cli" || got[1]["msg"] != "shown" {
		t.Fatalf("want a warning and the info default: %v", got)
	}
}

// Records at info and above never show object IDs, pack or probe keys,
// access key IDs, URL user info, credentials or registered private paths;
// debug records are left alone for the operator.
func TestLoggerScrubs(t *testing.T) {
	t.Setenv("LOG_LEVEL", "debug")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	priv := t.TempDir() + "/private-root"
	redactPath(priv)
	var buf bytes.Buffer
	log := newLogger(&buf).With("module", "remote", "store", "s3://AKIAIOSFODNN7EXAMPLE:pw@host/b")
	secrets := []string{
		strings.Repeat("ab", 32), strings.Repeat("c", 40), "packs/increments/7-0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5b.pack",
		"probe/0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5b", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", priv,
	}
	all := strings.Join(secrets, " ")
	log.Info("info "+all, "err", errors.New(all), "group", slog.GroupValue(slog.String("k", all)))
	log.Error("error", "cause", all)
	info := buf.String()
	for _, s := range secrets {
		if strings.Contains(info, s) {
			t.Errorf("an info/error record shows %q:\n%s", s, info)
		}
	}
	if strings.Contains(info, ":pw@host") {
		t.Errorf("URL user info shown:\n%s", info)
	}
	buf.Reset()
	log.Debug("debug " + secrets[0])
	if !strings.Contains(buf.String(), secrets[0]) {
		t.Errorf("debug record was scrubbed: %s", buf.String())
	}
}
