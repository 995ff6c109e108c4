//go:build failpoints

package rewrite

import "os"

// killAt ends the process abruptly at the failpoint named in
// SLIVINGDOC_FAILPOINT (test builds only). Named as "interrupt:" and the
// point, it sends the process SIGINT there instead, as a person's Ctrl-C
// at that instant, and goes on: what happens then is the command's
// handling of the signal.
func killAt(name string) {
	p, err := os.FindProcess(os.Getpid())
	switch os.Getenv("SLIVINGDOC_FAILPOINT") {
	case name:
		if err == nil {
			_ = p.Kill() // SIGKILL on unix, TerminateProcess on windows
		}
		select {} // never return, even if the kill is delivered late
	case InterruptPrefix + name:
		if err == nil {
			_ = p.Signal(os.Interrupt)
		}
	}
}
