package section

// SetMaxSteps lowers the bound on a template's steps to n until restore
// is called, so that tests reach it quickly.
func SetMaxSteps(n int) (restore func()) {
	maxSteps = n
	return func() { maxSteps = MaxTemplateSteps }
}
