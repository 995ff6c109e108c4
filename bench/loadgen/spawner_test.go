package main

import (
	"context"
	"runtime"
	"testing"
)

// A process started by a big parent reports the parent's RSS as its own
// maximum (vfork shares the address space until exec); started by the
// spawner, which stays small, it reports its own.
func TestSpawnerKeepsRSSOfTheChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the inherited high-water mark is a Linux behaviour")
	}
	sp, err := startSpawner()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	const grow = 256 << 20
	ballast := make([]byte, grow)
	for i := range ballast {
		ballast[i] = 1 // touch every page: resident
	}
	req := spawnRequest{Bin: "true"}
	direct := spawn(context.Background(), req)
	viaSpawner, err := sp.run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(ballast)
	if direct.Exit != 0 || viaSpawner.Exit != 0 {
		t.Fatalf("exit %d / %d", direct.Exit, viaSpawner.Exit)
	}
	if direct.RSSKiB < grow>>10 {
		t.Fatalf("direct child reports %d KiB: the inheritance this spawner avoids did not show (test premise)", direct.RSSKiB)
	}
	if viaSpawner.RSSKiB >= grow>>11 {
		t.Fatalf("child of the spawner reports %d KiB: it inherited the parent's memory", viaSpawner.RSSKiB)
	}
}
