package api

import (
	"errors"
	"reflect"
	"testing"

	"github.com/heraldhq/herald/wire"
)

// bodyTypes are the request bodies the API decodes, one per endpoint family.
var bodyTypes = []any{
	loginRequest{}, createUserRequest{}, createProjectRequest{}, updateUsersRequest{}, wire.ChannelDoc{},
	wire.SubscriptionDoc{}, manageRequest{}, objectRequest{}, identifiersRequest{}, executeRequest{}, exportRequest{},
	validateRequest{}, projectExportRequest{}, projectImportRequest{}, partialExportRequest{}, partialImportRequest{},
}

// bodySeeds are bodies of each type as clients send them, by index in bodyTypes.
var bodySeeds = map[int][]string{
	0: {`{"postUserLogin":{"login":"a@x.io","password":"p","remember":0,"captcha":"","verifyCaptcha":""}}`,
		`{"postUserLogin":{"login":"a@x.io","password":"p","remember":1,"verify_level":2}}`},
	1: {`{"accountSetting":{"login":"a@x.io","password":"Passw0rd!x","firstName":"A","lastName":"B"}}`,
		`{"accountSetting":{"login":"a@x.io","firstName":"A","lastName":"B","password":"P","verifyPassword":"P","email":"a@x.io","language":"en-US"}}`},
	2: {`{"project":{"content":{"guidedNavigation":1,"driver":"Pg"},"meta":{"title":"T","summary":""}}}`},
	3: {`{"user":{"content":{"status":"ENABLED","userRoles":["/svc/projects/p/roles/2"]},"links":{"self":"/svc/account/profile/u"}}}`,
		`{"users":[{"user":{"content":{"userRoles":["/svc/projects/p/roles/3"],"status":"ENABLED"},"links":{"self":"/svc/account/profile/a@x.io"}}}]}`},
	4: {`{"channelConfiguration":{"configuration":{"smsConfiguration":{"username":"AC1","password":"x","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"S"}}}`},
	5: {`{"subscription":{"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * *","timezone":"UTC"}}],"condition":{"condition":{"expression":"true"}},"subject":{"template":{"expression":"s"}},"message":{"template":{"expression":"m"}},"channels":["/c"],"meta":{"title":"t"}}}`},
	6: {`{"manage":{"maql":"CREATE DATASET {dataset.x} VISUAL(TITLE \"X\");"}}`},
	7: {`{"metric":{"meta":{"title":"M"},"content":{"expression":"SELECT SUM({fact.x})","format":"#,##0"}}}`},
	8: {`{"identifierToUri":["fact.x","attr.y"]}`},
	9: {`{"report_req":{"definitionContent":{"content":{"reportDefinition":{"content":{"format":"grid","grid":{"rows":[],"columns":["metricGroup"],"metrics":[{"uri":"/svc/md/p/obj/1","alias":""}]}},"meta":{"title":"t"}}},"projectMetadata":"/svc/md/p"}}}`,
		`{"report_req":{"reportDefinition":"/svc/md/p/obj/2"}}`,
		`{"report_req":{"definitionContent":{"content":{"reportDefinition":{"content":{"format":"grid","grid":{"rows":["metricGroup"],"columns":[],"metrics":[]},"filters":[]},"meta":{"tags":"","summary":"","title":"Untitled report definition"}}},"projectMetadata":"/svc/md/p"}}}`},
	10: {`{"result_req":{"report":"/svc/md/p/obj/abc","format":"CSV"}}`,
		`{"result_req":{"result":{"reportResult2":{"meta":{"uri":"/svc/md/p/obj/abc"}},"execResult":{"dataResult":"/svc/md/p/dataResult/d"}},"format":"csv"}}`},
	11: {`{"validateProject":["LDM","PDM"]}`, `{"validateProject":["ldm","pdm","metric_filter","invalid_objects","pdm::transitivity"]}`},
	12: {`{"exportProject":{"exportUsers":1,"exportData":0,"authorizedUsers":["a@x.io"]}}`, `{"exportProject":{"exportUsers":null}}`,
		`{"exportProject":{"exportUsers":"1","exportData":"1","excludeSchedules":"0","crossDataCenterExport":"0"}}`},
	13: {`{"importProject":{"token":"t"}}`},
	14: {`{"partialMDExport":{"uris":["/svc/md/p/obj/1"]}}`},
	15: {`{"partialMDImport":{"token":"t","overwriteNewer":true,"updateLDMObjects":false}}`},
}

// FuzzDecodeBodies decodes arbitrary bytes as each request body type (the first byte
// picks the type) and runs the checks that need no store: a body decodes, or is refused
// with a 4xx error naming what is wrong; it never panics and never is a 5xx.
func FuzzDecodeBodies(f *testing.F) {
	for i, seeds := range bodySeeds {
		for _, s := range seeds {
			f.Add(append([]byte{byte(i)}, s...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		typ := reflect.TypeOf(bodyTypes[int(in[0])%len(bodyTypes)])
		v := reflect.New(typ)
		err := decodeJSON(in[1:], v.Interface())
		if err == nil {
			err = check(v.Interface())
		}
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.Status < 400 || e.Status >= 500 {
			t.Fatalf("%s %q: err = %#v, want a 4xx *Error", typ, in[1:], err)
		}
	})
}

// check runs the validation of a decoded body that needs no store.
func check(body any) error {
	switch b := body.(type) {
	case *executeRequest:
		_, _, err := b.source()
		return err
	case *exportRequest:
		if b.ResultReq == nil {
			return nil
		}
		_, _, err := b.resultURI()
		return err
	case *createUserRequest:
		if a := b.AccountSetting; a != nil {
			return checkEmailLanguage("accountSetting.", a.Login, a.Email, a.Language)
		}
	}
	return nil
}
