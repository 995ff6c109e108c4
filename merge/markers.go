package merge

// ScanMarkers returns the line range of every complete conflict block in content.
func ScanMarkers(content []byte) []Range { panic("merge: ScanMarkers not implemented yet") }
