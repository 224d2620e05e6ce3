package tools

// CompileInput compiles t's input schema as its first call does. New
// leaves that to the call, so the inference tests compile every schema
// they infer with it: inferred schemas must always compile.
func CompileInput(t *Tool) error {
	_, err := t.compiled()
	return err
}
