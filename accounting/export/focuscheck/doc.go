// Package focuscheck checks a FOCUS dataset (a CSV file and its metadata)
// against the rules of the FinOps FOCUS 1.2 specification
// (github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec, tag v1.2,
// specification/columns/*.md, specification/attributes/*.md and
// specification/metadata/): the columns a dataset must have, allowed
// values, null handling, the numeric and date/time formats, the cost =
// unit price × quantity relations, corrections, custom columns, key-value
// columns and the metadata that describes the data.
//
// Each check names the specification file and requirement it comes from
// ([Violation.Rule]) and its level: MUST (a dataset that breaks it does
// not conform) or SHOULD (recommended). A rule that depends on what the
// provider supports ("MUST be present when the provider publishes price
// lists") is decided by [Provider].
//
// It is written from the specification, not from gpubridge's output: it
// imports nothing of gpubridge, reads the CSV as any consumer would (an
// empty cell is null) and recomputes products exactly with math/big. The
// exporter's tests and the accounting integration tests run it over every
// FOCUS export they make.
package focuscheck
