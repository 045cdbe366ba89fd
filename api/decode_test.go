package api

import (
	"errors"
	"testing"
)

type decodeTarget struct {
	Login *struct {
		Name     string      `json:"name"`
		Remember looseString `json:"remember"`
		Admin    flag        `json:"admin"`
		Roles    []string    `json:"roles"`
		Count    *int        `json:"count"`
	} `json:"login"`
}

func TestDecodeJSONNamesTheField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, param, msg string
	}{
		{"unknown nested", `{"login":{"nam":"x"}}`, "login.nam", "Unknown field %s"},
		{"wrong type", `{"login":{"name":1}}`, "login.name", "Field %s must be a string"},
		{"array item", `{"login":{"roles":["a",2]}}`, "login.roles[1]", "Field %s must be a string"},
		{"not an array", `{"login":{"roles":"a"}}`, "login.roles", "Field %s must be an array"},
		{"fraction for int", `{"login":{"count":1.5}}`, "login.count", "Field %s must be a whole number"},
		{"bad flag", `{"login":{"admin":"maybe"}}`, "login.admin", "Field %s must be true, false, 1 or 0"},
		{"bad loose string", `{"login":{"remember":[]}}`, "login.remember", "Field %s must be a string or a number"},
		{"root not object", `"x"`, "(request body)", "Field %s must be an object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var v decodeTarget
			err := decodeJSON([]byte(tc.body), &v)
			var e *Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("err = %v, want a 400", err)
			}
			if len(e.Params) == 0 || e.Params[0] != tc.param || e.Message != tc.msg {
				t.Errorf("error = %q %v, want %q [%s]", e.Message, e.Params, tc.msg, tc.param)
			}
		})
	}
}

func TestDecodeJSONLenientValues(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"login":{"remember":0,"admin":1}}`, `{"login":{"remember":"0","admin":"1"}}`, `{"login":{"admin":true}}`,
	} {
		var v decodeTarget
		if err := decodeJSON([]byte(body), &v); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	var v decodeTarget
	if err := decodeJSON([]byte(`{"login":{"remember":7,"admin":"1"}}`), &v); err != nil || v.Login.Remember != "7" || !v.Login.Admin {
		t.Errorf("decoded %+v, %v", v.Login, err)
	}
}

// FuzzDecodeJSON checks that no body makes decoding panic and that every
// failure is a 4xx API error.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{`{"login":{"name":"a","roles":["x"],"count":3}}`, `{"login":`, `[]`, `{"login":{"admin":"1"}}`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v decodeTarget
		err := decodeJSON(body, &v)
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.Status < 400 || e.Status >= 500 {
			t.Fatalf("err = %#v, want a 4xx *Error", err)
		}
	})
}

func TestJSONToYAMLKeepsOrderAndTypes(t *testing.T) {
	t.Parallel()
	y, err := jsonToYAML([]byte(`{"b":"1","a":1,"c":null,"d":["x","true"],"e":""}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "b: \"1\"\na: 1\nc: null\nd:\n  - x\n  - \"true\"\ne: \"\"\n"
	if string(y) != want {
		t.Errorf("yaml =\n%s\nwant\n%s", y, want)
	}
}
