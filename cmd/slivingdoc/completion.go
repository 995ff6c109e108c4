package main

// `slivingdoc completion bash|zsh|fish`: a completion script made from the
// commands and flags the binary has, so it cannot drift from them. Each
// command's flags are read from its own -h page (the page is the one place
// that lists them, and help touches nothing).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

func init() {
	register(command{name: "completion", summary: "print a shell completion script (bash, zsh or fish)", run: runCompletion, oneShot: true, ownSignals: true})
}

const completionUsage = `Usage: slivingdoc completion bash|zsh|fish

Prints a script that completes slivingdoc's commands, their flags and file
names in that shell. Load it in the shell's start-up file:

  bash  (~/.bashrc)                    source <(slivingdoc completion bash)
  zsh   (~/.zshrc, after compinit)     source <(slivingdoc completion zsh)
  fish  (~/.config/fish/config.fish)   slivingdoc completion fish | source

Exit status: 0 the script was printed, 2 a usage error.
`

func runCompletion(_ context.Context, args []string, s stdio) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(s.out, completionUsage)
		return 0
	}
	if len(args) != 1 {
		fmt.Fprintf(s.err, "slivingdoc completion: name one shell: bash, zsh or fish\nRun 'slivingdoc completion -h' for the reference.\n")
		return 2
	}
	var write func(io.Writer, []completionCommand)
	switch args[0] {
	case "bash":
		write = bashCompletion
	case "zsh":
		write = zshCompletion
	case "fish":
		write = fishCompletion
	default:
		fmt.Fprintf(s.err, "slivingdoc completion: unknown shell %q: bash, zsh or fish\n", args[0])
		return 2
	}
	write(s.out, completionCommands())
	return 0
}

// completionCommand is one command as a completion script sees it.
type completionCommand struct {
	name, summary string
	flags         []string // without dashes
	words         []string // the fixed words of its first argument, if any
}

func completionCommands() []completionCommand {
	var out []completionCommand
	for _, n := range commandNames() {
		cmd, _ := lookup(n)
		c := completionCommand{name: n, summary: cmd.summary, flags: commandFlags(n)}
		switch n {
		case "help":
			c.words = append(commandNames(), "store")
		case "completion":
			c.words = []string{"bash", "zsh", "fish"}
		}
		out = append(out, c)
	}
	return out
}

// flagLine matches a flag's line on a -h page: "  -name ..." or
// "  --name ...", indented by two spaces. Compiled on first use: only
// `completion` reads -h pages.
func flagLine() *regexp.Regexp {
	return flagLineOnce.Get(func() *regexp.Regexp { return regexp.MustCompile(`^  --?([A-Za-z][A-Za-z0-9-]*)\b`) })
}

var flagLineOnce noinit.Lazy[*regexp.Regexp]

// commandFlags returns the flags of command name, read from its -h page:
// its own flags and, when the page points to `help store`, the shared ones.
func commandFlags(name string) []string {
	c, ok := lookup(name)
	if !ok || name == "help" || name == "completion" {
		return nil
	}
	var out, errb bytes.Buffer
	c.run(context.Background(), []string{"-h"}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	var flags []string
	for line := range strings.Lines(out.String()) {
		if m := flagLine().FindStringSubmatch(line); m != nil && m[1] != "h" {
			flags = append(flags, m[1])
		}
	}
	if strings.Contains(out.String(), "slivingdoc help store") {
		for _, st := range allSettings {
			flags = append(flags, st.flag)
		}
	}
	slices.Sort(flags)
	return slices.Compact(flags)
}

// dashed is the flag as users type it: -m for one letter, --name otherwise
// (Go's flag package takes either).
func dashed(f string) string {
	if len(f) == 1 {
		return "-" + f
	}
	return "--" + f
}

func bashCompletion(w io.Writer, cmds []completionCommand) {
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "# bash completion for slivingdoc: source <(slivingdoc completion bash)\n")
	fmt.Fprintf(w, "_slivingdoc() {\n")
	fmt.Fprintf(w, "    local cur=${COMP_WORDS[COMP_CWORD]} flags= words=\n")
	fmt.Fprintf(w, "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n")
	fmt.Fprintf(w, "        COMPREPLY=($(compgen -W '%s --help --version' -- \"$cur\"))\n", strings.Join(names, " "))
	fmt.Fprintf(w, "        return\n    fi\n")
	fmt.Fprintf(w, "    case ${COMP_WORDS[1]} in\n")
	for _, c := range cmds {
		var fl []string
		for _, f := range c.flags {
			fl = append(fl, dashed(f))
		}
		fmt.Fprintf(w, "    %s) flags='%s'; words='%s' ;;\n", c.name, strings.Join(append(fl, "-h"), " "), strings.Join(c.words, " "))
	}
	fmt.Fprintf(w, "    esac\n")
	fmt.Fprintf(w, "    if [[ $cur == -* ]]; then\n")
	fmt.Fprintf(w, "        COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "    elif [ -n \"$words\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n")
	fmt.Fprintf(w, "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "    else\n")
	fmt.Fprintf(w, "        COMPREPLY=($(compgen -f -- \"$cur\"))\n")
	fmt.Fprintf(w, "    fi\n}\n")
	fmt.Fprintf(w, "complete -o default -F _slivingdoc slivingdoc\n")
}

// zshQuote quotes s for a zsh single-quoted word.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func zshCompletion(w io.Writer, cmds []completionCommand) {
	fmt.Fprintf(w, "#compdef slivingdoc\n# zsh completion for slivingdoc: source <(slivingdoc completion zsh), after compinit\n")
	// $words is zsh's array of the command line's words: the fixed
	// arguments go in another array.
	fmt.Fprintf(w, "_slivingdoc() {\n    local -a cmds flags fixed\n    cmds=(\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "        %s\n", zshQuote(c.name+":"+strings.ReplaceAll(c.summary, ":", `\:`)))
	}
	fmt.Fprintf(w, "    )\n    if (( CURRENT == 2 )); then\n        _describe command cmds\n        return\n    fi\n")
	fmt.Fprintf(w, "    case $words[2] in\n")
	for _, c := range cmds {
		var fl []string
		for _, f := range c.flags {
			fl = append(fl, dashed(f))
		}
		fmt.Fprintf(w, "    %s) flags=(%s); fixed=(%s) ;;\n", c.name, strings.Join(append(fl, "-h"), " "), strings.Join(c.words, " "))
	}
	fmt.Fprintf(w, "    esac\n")
	fmt.Fprintf(w, "    if [[ $PREFIX == -* ]]; then\n        compadd -- $flags\n")
	fmt.Fprintf(w, "    elif (( CURRENT == 3 && ${#fixed} > 0 )); then\n        compadd -- $fixed\n")
	fmt.Fprintf(w, "    else\n        _files\n    fi\n}\n")
	fmt.Fprintf(w, "compdef _slivingdoc slivingdoc\n")
}

// fishQuote quotes s for a fish single-quoted string.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func fishCompletion(w io.Writer, cmds []completionCommand) {
	fmt.Fprintf(w, "# fish completion for slivingdoc: slivingdoc completion fish | source\n")
	fmt.Fprintf(w, "complete -c slivingdoc -f\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c slivingdoc -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range cmds {
		cond := fishQuote("__fish_seen_subcommand_from " + c.name)
		for _, f := range c.flags {
			opt := "-l " + f
			if len(f) == 1 {
				opt = "-s " + f
			}
			fmt.Fprintf(w, "complete -c slivingdoc -n %s %s\n", cond, opt)
		}
		if len(c.words) > 0 {
			fmt.Fprintf(w, "complete -c slivingdoc -n %s -a %s\n", cond, fishQuote(strings.Join(c.words, " ")))
		} else if c.name != "version" {
			fmt.Fprintf(w, "complete -c slivingdoc -n %s -F\n", cond)
		}
	}
}
