//go:build integration

package docs

// pending lists the examples (Example.Key) whose drifts are logged, not
// failed, with why, while their documents are made to run in order on a
// scratch store. An entry is removed when its example passes; the test
// logs those that do.
var pending = map[string]string{}
