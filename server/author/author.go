// Package author decides the author a publication records: who claims to
// have written it. Authors are claimed, never authenticated: any process
// that can write to a store can name any author, so an author is a label
// for people reading history (`log`, `show`, `blame`), not an access
// control.
//
// Data flow:
//
//	--author / SLIVINGDOC_AUTHOR  ─┐
//	MCP clientInfo (serve)        ─┼─▶ Claim.Text ─▶ Clean ─▶ the author text
//	user and host of the process  ─┘                        (≤ MaxBytes, scrubbed)
//
// The rules, in order:
//
//  1. An override (the flag or the variable) that is not empty is the
//     author, alone: it replaces the client and the user and host.
//  2. An override that is empty turns the user and host part off: serve
//     records the client alone, the CLI records no author.
//  3. Otherwise serve records "NAME VERSION (USER@HOST)" from the client's
//     clientInfo (the parenthesised part alone when the client sent no
//     clientInfo), and the CLI records "USER@HOST".
//
// Every author passes through Clean: credentials, URL user information and
// long hex runs are replaced as in diagnostic text, control characters
// become spaces, and the text is cut to MaxBytes at a character boundary,
// so an author never carries a secret and always fits the format's field.
// No author at all ("") is recorded as no field (format v4 refuses an
// empty one).
package author

import (
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/secrets"
)

// MaxBytes bounds an author's UTF-8 encoding: the format's limit.
const MaxBytes = 256

// EnvVar names the variable that overrides the author, like --author.
const EnvVar = "SLIVINGDOC_AUTHOR"

// Claim is what a process knows of who is writing.
type Claim struct {
	// Override is --author or SLIVINGDOC_AUTHOR; HasOverride says one was
	// given (an empty one turns the user and host part off).
	Override    string
	HasOverride bool
	// ClientName and ClientVersion are the MCP client's clientInfo (serve
	// only; empty for the CLI and for clients that send none). Serve says
	// whether it serves a client at all.
	ClientName, ClientVersion string
	Serve                     bool
	// User and Host are the process's user and host names (Local).
	User, Host string
}

// Text returns the cleaned author the claim makes ("" for none).
func (c Claim) Text() string {
	if c.HasOverride && c.Override != "" {
		return Clean(c.Override)
	}
	who := ""
	if !c.HasOverride {
		who = userAtHost(c.User, c.Host)
	}
	if !c.Serve {
		return Clean(who)
	}
	client := strings.TrimSpace(strings.TrimSpace(c.ClientName) + " " + strings.TrimSpace(c.ClientVersion))
	switch {
	case client == "":
		return Clean(who)
	case who == "":
		return Clean(client)
	}
	return Clean(client + " (" + who + ")")
}

func userAtHost(user, host string) string {
	switch {
	case user == "":
		return host
	case host == "":
		return user
	}
	return user + "@" + host
}

// Local returns the process's user and host names, from the environment
// and the kernel: nothing that needs cgo or a directory service, and
// either may be empty.
func Local() (user, host string) {
	for _, v := range []string{"USER", "LOGNAME", "USERNAME"} {
		if user = os.Getenv(v); user != "" {
			break
		}
	}
	host, _ = os.Hostname()
	return user, host
}

// FromEnv returns the override of SLIVINGDOC_AUTHOR, if it is set.
func FromEnv() (override string, set bool) { return os.LookupEnv(EnvVar) }

// scrubber applies diagnostic text's policy (server/diag) to authors.
var scrubber = &diag.Scrubber{} // static data: a zero Scrubber has no literals yet

// Clean makes s fit to record: credentials and what diagnostic text
// scrubs are replaced, invalid UTF-8 and control characters become
// spaces, runs of spaces become one, and the result is cut to MaxBytes
// at a character boundary.
func Clean(s string) string {
	s = strings.ToValidUTF8(s, " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	s, _ = secrets.Redact(s)
	s = scrubber.Text(s)
	if len(s) > MaxBytes {
		cut := MaxBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimRight(s[:cut], " ")
	}
	return s
}
