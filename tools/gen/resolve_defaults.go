package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// checkLiteral verifies at generation time that a schema default decodes
// into its field's type, so applying it at run time cannot fail.
func (r *resolver) checkLiteral(ref *Ref, raw json.RawMessage, path string) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return r.checkValue(ref, v, path)
}

// checkValue checks the decoded default v against ref's Go type.
func (r *resolver) checkValue(ref *Ref, v any, path string) error {
	bad := func() error { return fmt.Errorf("%s: default %v does not fit its type", path, v) }
	switch {
	case ref.List:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		for _, e := range l {
			if err := r.checkValue(ref.Elem, e, path+"[]"); err != nil {
				return err
			}
		}
		return nil
	case ref.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for k, e := range m {
			if err := r.checkValue(ref.Elem, e, path+"/"+k); err != nil {
				return err
			}
		}
		return nil
	case ref.Named != nil:
		t := ref.Named
		switch t.Kind {
		case TEnum:
			s, ok := v.(string)
			if !ok {
				return bad()
			}
			if t.Open {
				return nil
			}
			for _, ev := range t.Values {
				if ev.Str == s {
					return nil
				}
			}
			return bad()
		case TScalar:
			return r.checkValue(t.Scalar, v, path)
		case TStruct:
			if t.Flat != nil {
				return fmt.Errorf("%s: defaults for objects with variants are not supported", path)
			}
			m, ok := v.(map[string]any)
			if !ok {
				return bad()
			}
			for k, e := range m {
				var f *Field
				for _, ff := range t.Fields {
					if ff.JSON == k {
						f = ff
					}
				}
				if f == nil {
					return fmt.Errorf("%s: default member %q is not a property of %s", path, k, t.Name)
				}
				if err := r.checkValue(f.Ref, e, path+"/"+k); err != nil {
					return err
				}
			}
			for _, f := range t.Fields {
				if _, ok := m[f.JSON]; f.Required && !ok {
					return fmt.Errorf("%s: default lacks required member %q", path, f.JSON)
				}
			}
			return nil
		case TRaw:
			return nil
		}
		return fmt.Errorf("%s: defaults of kind %v not supported", path, t.Kind)
	}
	switch ref.Prim {
	case "string":
		if s, ok := v.(string); ok {
			if p := ref.Pattern; p != nil && !p.re.MatchString(s) {
				return fmt.Errorf("%s: default %q does not match the pattern %q", path, s, p.Expr)
			}
			return nil
		}
	case "bool":
		if _, ok := v.(bool); ok {
			return nil
		}
	case "int", "uint", "float":
		if _, ok := v.(json.Number); ok {
			return nil
		}
	case "raw":
		return nil
	case "object":
		if _, ok := v.(map[string]any); ok {
			return nil
		}
	}
	return bad()
}
