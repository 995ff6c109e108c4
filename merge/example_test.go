package merge_test

import (
	"fmt"

	"github.com/slivingdoc/slivingdoc/merge"
)

func ExampleText() {
	base := []byte("# Plan\n\n- write\n- test\n")
	local := []byte("# Plan\n\n- write the merge\n- test\n")
	remote := []byte("# Plan\n\n- write\n- test\n- ship\n")
	res := merge.Text(base, local, remote)
	fmt.Printf("%s", res.Content)
	fmt.Println("conflicts:", len(res.Conflicts))
	// Output:
	// # Plan
	//
	// - write the merge
	// - test
	// - ship
	// conflicts: 0
}

func ExampleText_conflict() {
	base := []byte("status: draft\n")
	local := []byte("status: review\n")
	remote := []byte("status: done\n")
	res := merge.Text(base, local, remote)
	fmt.Printf("%s", res.Content)
	fmt.Println("conflict lines:", res.Conflicts[0].Start, "to", res.Conflicts[0].End)
	// Output:
	// <<<<<<< local
	// status: review
	// =======
	// status: done
	// >>>>>>> remote
	// conflict lines: 1 to 5
}

func ExampleScanMarkers() {
	content := []byte("a\n<<<<<<< local\nmine\n=======\ntheirs\n>>>>>>> remote\nb\n")
	fmt.Println(merge.ScanMarkers(content))
	// Output:
	// [{2 6}]
}

func ExampleStat() {
	ins, del := merge.Stat([]byte("a\nb\nc\n"), []byte("a\nB\nc\nd"))
	fmt.Printf("+%d -%d\n", ins, del)
	// Output:
	// +2 -1
}

func ExampleLineDiff() {
	old := []byte("a\nb\nc\n")
	new := []byte("a\nB\nc\nd\n")
	for _, e := range merge.LineDiff(old, new) {
		fmt.Printf("old [%d,%d) -> new [%d,%d)\n", e.OldStart, e.OldEnd, e.NewStart, e.NewEnd)
	}
	// Output:
	// old [1,2) -> new [1,2)
	// old [3,3) -> new [3,4)
}
