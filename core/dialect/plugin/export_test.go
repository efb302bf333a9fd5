package plugin

// SetAfterVerify installs the test seam called after a pinned plugin has
// been verified and before it is executed; the returned func restores it.
func SetAfterVerify(f func(path string)) (restore func()) {
	old := afterVerify
	afterVerify = f
	return func() { afterVerify = old }
}

// SetPinFallback forces a fallback of pinned loads on Linux (1: private copy
// executed through its descriptor, 2: by its path); it returns the restore.
func SetPinFallback(mode int) (restore func()) {
	old := pinFallback
	pinFallback = mode
	return func() { pinFallback = old }
}
