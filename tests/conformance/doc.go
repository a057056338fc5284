// Package conformance runs one list of Kafka Connect REST scenarios against
// two systems — a real Apache Kafka Connect 4.4 worker (the reference) and
// Sluice — and compares their answers.
//
// The scenarios are data (testdata/scenarios.json): request sequences with,
// for each step, what to compare. The expected differences are data too
// (testdata/deviations.json): one rule per row of the REST contract's §0,
// naming which scenario, status and message pattern on each side make that
// row. Each system runs with its own connector-name prefix, topic prefix and
// file directory; the runner replaces them by ${c}, ${t} and ${dir} before
// comparing, together with what legitimately differs (worker ids, traces,
// array and object order, the text of upstream's Jackson 500s).
//
// A request answered with Kafka Connect's transient 500 "Request cannot be
// completed because a rebalance is expected" is sent again (for up to 15 s):
// a worker between assignments says it, and it is not what the scenarios
// compare. Reads that upstream answers eventually-consistently (offsets right
// after a reset) poll until settled, as status reads do.
//
// A scenario's verdict is "same", "deviation" (every difference is a named
// §0 row) or "MISMATCH". cmd/conformance runs the list and writes
// docs/conformance.md; `make conformance` starts everything it needs.
package conformance
