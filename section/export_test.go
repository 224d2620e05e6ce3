package section

// SetMaxSteps lowers the bound on the template steps of a render to n
// until restore is called, so that tests reach it quickly.
func SetMaxSteps(n int64) (restore func()) {
	maxSteps = n
	return func() { maxSteps = MaxTemplateSteps }
}

// SetMaxBytes lowers the bound on the template bytes of a render to n
// until restore is called.
func SetMaxBytes(n int64) (restore func()) {
	maxBytes = n
	return func() { maxBytes = MaxTemplateBytes }
}
