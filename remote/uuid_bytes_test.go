package remote_test

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Every byte value at every position of a valid ID: the ID stays valid
// exactly when the byte is one the canonical form allows there (a dash at
// 8, 13, 18 and 23; '7' at 14; 8, 9, a or b at 19; a lowercase hex digit
// elsewhere), so no byte next to a range's ends ('/', ':', '`', 'g') slips
// through.
func TestIsPublicationIDEveryByte(t *testing.T) {
	valid := "01936f2a-0000-7000-8000-000000000001"
	if !remote.IsPublicationID(valid) {
		t.Fatalf("%s is refused", valid)
	}
	allowed := func(i int, c byte) bool {
		hex := '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
		switch i {
		case 8, 13, 18, 23:
			return c == '-'
		case 14:
			return c == '7'
		case 19:
			return c == '8' || c == '9' || c == 'a' || c == 'b'
		}
		return hex
	}
	for i := range len(valid) {
		for c := range 256 {
			s := valid[:i] + string([]byte{byte(c)}) + valid[i+1:]
			if got, want := remote.IsPublicationID(s), allowed(i, byte(c)); got != want {
				t.Errorf("byte %#02x at %d: IsPublicationID = %v, want %v", c, i, got, want)
			}
		}
	}
}
