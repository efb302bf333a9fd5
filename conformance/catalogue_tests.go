package conformance

func catalogueTests() []Test {
	return []Test{
		{"catalogue/complete_and_well_formed", testCatalogue},
	}
}

// testCatalogue runs the one catalogue check, (*dialect.Catalogue).Validate,
// the same that plugin.Load and engine.Open run: every statement the
// strategy needs, each template's binds and tables against its statement's
// spec, the scripts, identity, query columns, introspection and error rules.
// The suite's own Env got its catalogue through Load already; this names
// every problem at once instead of failing the first Open.
func testCatalogue(t T, env *Env) {
	c := env.Catalogue
	if err := c.Validate(); err != nil {
		t.Fatalf("%v", err)
	}
}
