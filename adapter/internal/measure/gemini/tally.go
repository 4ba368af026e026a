package gemini

import "acpkit.dev/adapter/internal/measure"

// tally is the sum of counted records (GEM-6's folding is done on read).
type tally struct {
	input, output, cached, thoughts int64
	records                         int
	// nonZeroRecords counts records with any non-zero counter (GEM-10).
	nonZeroRecords int
	// mainModel is the model of the last main-role record, lastModel of
	// the last record naming one (issue #12's model of record).
	mainModel, lastModel string
}

// add folds one record's counters.
func (t *tally) add(in, out, cached, thoughts int64, model, role string) {
	t.input += in
	t.output += out
	t.cached += cached
	t.thoughts += thoughts
	t.records++
	if in != 0 || out != 0 || cached != 0 || thoughts != 0 {
		t.nonZeroRecords++
	}
	if model != "" {
		t.lastModel = model
		if role == "main" {
			t.mainModel = model
		}
	}
}

// basis is GEM-6's comparison basis: input + output, thoughts excluded.
func (t tally) basis() int64 { return t.input + t.output }

// usage is GEM-6's figure: thoughts count as output, cache-read is a
// subset of input, never added to it.
func (t tally) usage() measure.Usage {
	out := t.output + t.thoughts
	return measure.Usage{Input: t.input, Output: out, Total: t.input + out, CacheRead: t.cached}
}

func (t tally) model() string {
	if t.mainModel != "" {
		return t.mainModel
	}
	return t.lastModel
}

func (t tally) nonZero() bool { return t.nonZeroRecords > 0 }

// count is the tally as measure.Account grades it.
func (t tally) count() measure.Count {
	return measure.Count{Usage: t.usage(), Basis: t.basis(), Records: t.records, NonZero: t.nonZeroRecords, Model: t.model()}
}

// since is what t counted after before.
func (t tally) since(before tally) tally {
	return tally{
		input: t.input - before.input, output: t.output - before.output,
		cached: t.cached - before.cached, thoughts: t.thoughts - before.thoughts,
		records: t.records - before.records, nonZeroRecords: t.nonZeroRecords - before.nonZeroRecords,
		mainModel: t.mainModel, lastModel: t.lastModel,
	}
}
