package main

import (
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Charts are well-formed SVG, and every plotted point lies inside the plot
// area whatever the data (log or linear X, zero and large values).
func TestChartSVG(t *testing.T) {
	charts := []chart{
		{Title: "log <x> & y", LogX: true, Series: []series{
			{Name: "a", X: []float64{100, 1000, 10000}, Y: []float64{12, 30.5, 250}, Dots: true},
			{Name: "b", X: []float64{100, 10000}, Y: []float64{0, 3}, Dots: true},
		}},
		{Title: "linear", Series: []series{{Name: "c", X: []float64{1, 2, 3, 200}, Y: []float64{0.2, 0.3, 0.25, 0.9}}}},
		{Title: "empty"},
	}
	for _, c := range charts {
		dec := xml.NewDecoder(strings.NewReader(string(c.svg())))
		points := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed: %v", c.Title, err)
			}
			el, ok := tok.(xml.StartElement)
			if !ok {
				continue
			}
			seen := map[string]bool{} // encoding/xml accepts duplicates; SVG renderers refuse them
			for _, a := range el.Attr {
				if seen[a.Name.Local] {
					t.Fatalf("%s: <%s> repeats attribute %s", c.Title, el.Name.Local, a.Name.Local)
				}
				seen[a.Name.Local] = true
			}
			if el.Name.Local != "circle" {
				continue
			}
			points++
			var x, y float64
			for _, a := range el.Attr {
				v, _ := strconv.ParseFloat(a.Value, 64)
				switch a.Name.Local {
				case "cx":
					x = v
				case "cy":
					y = v
				}
			}
			if x < marginL-0.5 || x > marginL+plotW+0.5 || y < marginT-0.5 || y > marginT+plotH+0.5 {
				t.Fatalf("%s: point (%.1f, %.1f) outside the plot area", c.Title, x, y)
			}
		}
		want := 0
		for _, s := range c.Series {
			if s.Dots {
				want += len(s.X)
			}
		}
		if points != want {
			t.Fatalf("%s: %d points drawn, want %d", c.Title, points, want)
		}
	}
}

func TestNiceScale(t *testing.T) {
	for _, max := range []float64{0.9, 1, 7, 30.5, 99, 100, 1234} {
		top, step := niceScale(max)
		if top < max || top/step < 1 || top/step > 10 {
			t.Fatalf("niceScale(%v) = %v, %v", max, top, step)
		}
	}
}

// Percentiles are measured values (nearest rank), never interpolations.
func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	d := summarize(ds)
	if d.N != 10 || d.Median != 5*time.Millisecond || d.P10 != time.Millisecond || d.P90 != 9*time.Millisecond || d.Max != 10*time.Millisecond {
		t.Fatalf("summarize = %+v", d)
	}
	if one := summarize([]time.Duration{time.Second}); one.Median != time.Second || one.P10 != time.Second || one.P90 != time.Second {
		t.Fatalf("one sample: %+v", one)
	}
	if (summarize(nil) != Dist{}) {
		t.Fatal("no samples must summarise to zero")
	}
}
