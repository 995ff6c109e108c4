package s3store

import (
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// A page as S3 sends it: the scanner reads it (no fallback), with the
// entities of an ETag's quotes and of a key's ampersand expanded.
func TestListPageScannerReadsAnS3Page(t *testing.T) {
	page := `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><Prefix>nb/proposals/</Prefix><StartAfter>nb/proposals/a</StartAfter><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken><Contents><Key>nb/proposals/b&amp;c</Key><LastModified>2026-12-07T06:00:00.000Z</LastModified><ETag>&#34;9b2cf535f27731c974343645a3985328&#34;</ETag><Size>1234</Size><Owner><ID>abc</ID><DisplayName>x</DisplayName></Owner><StorageClass>STANDARD</StorageClass></Contents><Contents><Key>nb/proposals/d</Key><ETag>&quot;e&quot;</ETag><Size>0</Size></Contents><CommonPrefixes><Prefix>nb/x/</Prefix></CommonPrefixes></ListBucketResult>`
	got, err := scanListPage([]byte(page))
	if err != nil {
		t.Fatalf("the scanner refused an S3 page: %v", err)
	}
	want := s3ListPage{
		Contents: []s3ListEntry{
			{Key: "nb/proposals/b&c", Size: 1234, ETag: `"9b2cf535f27731c974343645a3985328"`},
			{Key: "nb/proposals/d", Size: 0, ETag: `"e"`},
		},
		IsTruncated:           true,
		NextContinuationToken: "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	assertSameAsXML(t, page)
}

// Pages of every shape the generator makes decode as encoding/xml decodes
// them: the scanner either refuses a page (and encoding/xml decodes it) or
// gives encoding/xml's result.
func TestListPageMatchesEncodingXML(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 38))
	scanned := 0
	for i := range 20000 {
		page := randomListPage(rng)
		if _, err := scanListPage([]byte(page)); err == nil {
			scanned++
		}
		if !assertSameAsXML(t, page) {
			t.Fatalf("page %d: %q", i, page)
		}
	}
	if scanned < 2000 {
		t.Fatalf("the scanner read only %d of 20,000 pages (the generator makes too few it reads to compare)", scanned)
	}
}

// assertSameAsXML checks decodeListPage against encoding/xml on page.
func assertSameAsXML(t *testing.T, page string) bool {
	t.Helper()
	var want s3ListPage
	werr := xml.Unmarshal([]byte(page), &want)
	got, gerr := decodeListPage([]byte(page))
	if (werr == nil) != (gerr == nil) {
		t.Errorf("encoding/xml: %v; decodeListPage: %v", werr, gerr)
		return false
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
		return false
	}
	return true
}

// randomListPage builds a list page from pieces that are mostly
// well-formed: names with and without prefixes, attributes, comments,
// CDATA, entities (some invalid), nested elements inside the fields read,
// whitespace, carriage returns and now and then a broken tag.
func randomListPage(rng *rand.Rand) string {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	text := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			if rng.IntN(12) == 0 { // mostly refused, by one or both
				b.WriteString(pick("&#0;", "&#X41;", "&bogus;", "&#;", "&", "<![CDATA[\r]]>", "]]>", "\xff", "&#x110000;"))
				continue
			}
			b.WriteString(pick("a", "proposals/x-1", " ", "\n", "\r\n", "\r", "&amp;", "&lt;", "&gt;", "&quot;", "&apos;",
				"&#34;", "&#x22;", "&#x41;", "&#13;", "<![CDATA[c<d]]>", "<!-- c -->", "é", "12", " 7 ", "true", "false", "1"))
		}
		return b.String()
	}
	elem := func(name, body string) string {
		p := pick("", "", "", "s3:")
		open := p + name + pick("", "", "", ` a="1"`, ` a='x'`, ` xmlns="u"`, ` b="&amp;"`, ` c=1`)
		if body == "" && rng.IntN(4) == 0 {
			return "<" + open + "/>"
		}
		end := p + name
		if rng.IntN(200) == 0 {
			end = name + "x"
		}
		return "<" + open + ">" + body + "</" + end + pick(">", ">", " >")
	}
	field := func(name string) string {
		body := text()
		if rng.IntN(8) == 0 {
			body += elem("Inner", text()) + text()
		}
		return elem(name, body)
	}
	var b strings.Builder
	b.WriteString(pick(`<?xml version="1.0" encoding="UTF-8"?>`+"\n", "", "<!-- head -->", " "))
	var root strings.Builder
	for range rng.IntN(6) {
		switch rng.IntN(6) {
		case 0, 1:
			var c strings.Builder
			for range rng.IntN(5) {
				c.WriteString(field(pick("Key", "Size", "ETag", "LastModified", "Owner")))
			}
			root.WriteString(elem("Contents", c.String()))
		case 2:
			root.WriteString(field("IsTruncated"))
		case 3:
			root.WriteString(field("NextContinuationToken"))
		case 4:
			root.WriteString(elem("CommonPrefixes", field("Prefix")+elem("Contents", field("Key"))))
		default:
			root.WriteString(field(pick("Name", "Key", "Size")))
		}
		root.WriteString(pick("", "", "\n  ", "", "x"))
	}
	b.WriteString(elem(pick("ListBucketResult", "Other"), root.String()))
	b.WriteString(pick("", "\n", "<!-- tail -->", "", "\n", "<Second/>", "junk"))
	if rng.IntN(100) == 0 {
		s := b.String()
		return s[:rng.IntN(len(s)+1)]
	}
	return b.String()
}

// The scanner against encoding/xml on a page of 1,000 keys.
func BenchmarkListPage(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>nb/</Prefix><KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>`)
	for i := range 1000 {
		fmt.Fprintf(&sb, `<Contents><Key>nb/proposals/%016x-%08d</Key><LastModified>2026-12-07T06:00:00.000Z</LastModified><ETag>&#34;%032x&#34;</ETag><Size>%d</Size><Owner><ID>0</ID></Owner><StorageClass>STANDARD</StorageClass></Contents>`, i*7919, i, i*31, 900+i)
	}
	sb.WriteString(`</ListBucketResult>`)
	data := []byte(sb.String())
	b.Run("scanner", func(b *testing.B) {
		for b.Loop() {
			if _, err := scanListPage(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-xml", func(b *testing.B) {
		for b.Loop() {
			var p s3ListPage
			if err := xml.Unmarshal(data, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The scanner never decodes a page other than encoding/xml does: a page it
// accepts decodes the same by encoding/xml, and any page decodeListPage
// reads, it reads as encoding/xml does. Seeded with an S3 page and the
// generator's pages; the fuzzer then mutates bytes the generator would not.
func FuzzListPageMatchesEncodingXML(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>true</IsTruncated>` +
		`<NextContinuationToken>t/x=</NextContinuationToken><Contents><Key>nb/p&amp;q</Key>` +
		`<ETag>&#34;9b2c&#34;</ETag><Size>12</Size></Contents></ListBucketResult>`))
	rng := rand.New(rand.NewPCG(7, 38))
	for range 64 {
		f.Add([]byte(randomListPage(rng)))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		if got, err := scanListPage(page); err == nil {
			var want s3ListPage
			if werr := xml.Unmarshal(page, &want); werr != nil {
				t.Fatalf("the scanner read a page encoding/xml refuses (%v): %+v", werr, got)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("scanner %+v\nencoding/xml %+v", got, want)
			}
		}
		assertSameAsXML(t, string(page))
	})
}
