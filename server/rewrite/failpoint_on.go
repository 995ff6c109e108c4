//go:build failpoints

package rewrite

import "os"

// killAt ends the process abruptly at the failpoint named in
// SLIVINGDOC_FAILPOINT (test builds only).
func killAt(name string) {
	if os.Getenv("SLIVINGDOC_FAILPOINT") != name {
		return
	}
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		_ = p.Kill() // SIGKILL on unix, TerminateProcess on windows
	}
	select {} // never return, even if the kill is delivered late
}
