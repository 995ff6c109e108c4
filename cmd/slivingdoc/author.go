package main

import (
	"flag"
	"strings"

	"github.com/slivingdoc/slivingdoc/server/author"
)

// The author a process claims for the publications it makes (commit, and
// serve for each client it serves). server/author holds the rules; this
// file wires their sources: --author, SLIVINGDOC_AUTHOR, the user and
// host. Authors are claimed, not authenticated.

// authorUsage is --author's help line, the same on commit and serve.
const authorUsage = "claim `name` as the author of what this process publishes, in place of the user and host\n" +
	"      (and, in serve, of the MCP client); empty: no user and host. Default: $" + author.EnvVar

// authorFlag is --author as given on the command line.
type authorFlag struct {
	value string
	set   bool // given, even empty: an empty one turns the user and host off
}

func addAuthorFlag(fs *flag.FlagSet) *authorFlag {
	a := &authorFlag{}
	fs.Func("author", authorUsage, func(v string) error {
		a.value, a.set = v, true
		return nil
	})
	return a
}

// claim is the process's claim: the flag wins over the variable, and
// either, even empty, is the override; user and host always come along
// (the rules decide whether they are recorded). env and local are
// author.FromEnv and author.Local outside tests.
func (a *authorFlag) claim(env func() (string, bool), local func() (user, host string)) author.Claim {
	var c author.Claim
	if a.set {
		c.Override, c.HasOverride = a.value, true
	} else {
		c.Override, c.HasOverride = env()
	}
	c.User, c.Host = local()
	return c
}

// processClaim is claim from the real environment.
func (a *authorFlag) processClaim() author.Claim { return a.claim(author.FromEnv, author.Local) }

// authorUsageText is authorUsage as flag prints it: the backquotes only
// name the argument.
func authorUsageText() string { return strings.ReplaceAll(authorUsage, "`", "") }
