package wire

import "strings"

// The URIs that name records on the wire. Each Parse function takes exactly
// the form its builder writes, and the ids the service mints (ASCII letters
// and digits; project and role ids in lower case; object ids also with _ . -).

const (
	profilePrefix  = "/svc/account/profile/"
	projectPrefix  = "/svc/projects/"
	mdPrefix       = "/svc/md/"
	channelsInfix  = "/channelConfigurations/"
	rolesInfix     = "/roles/"
	objInfix       = "/obj/"
	usersInfix     = "/users/"
	subscriptInfix = "/subscriptions/"
)

// ProfileURI is the URI of user uid's profile.
func ProfileURI(uid string) string { return profilePrefix + uid }

// ParseProfileURI returns the user id of a profile URI.
func ParseProfileURI(uri string) (uid string, ok bool) {
	uid, ok = strings.CutPrefix(uri, profilePrefix)
	return uid, ok && isID(uid, alnum)
}

// ProjectURI is the URI of project pid.
func ProjectURI(pid string) string { return projectPrefix + pid }

// ChannelURI is the URI of channel configuration cid of user uid.
func ChannelURI(uid, cid string) string { return profilePrefix + uid + channelsInfix + cid }

// ParseChannelURI returns the user and channel ids of a channel
// configuration URI.
func ParseChannelURI(uri string) (uid, cid string, ok bool) {
	rest, ok := strings.CutPrefix(uri, profilePrefix)
	if !ok {
		return "", "", false
	}
	uid, cid, ok = strings.Cut(rest, channelsInfix)
	return uid, cid, ok && isID(uid, alnum) && isID(cid, alnum)
}

// RoleURI is the URI of role rid of project pid.
func RoleURI(pid, rid string) string { return projectPrefix + pid + rolesInfix + rid }

// ParseRoleURI returns the project and role ids of a role URI.
func ParseRoleURI(uri string) (pid, rid string, ok bool) {
	rest, ok := strings.CutPrefix(uri, projectPrefix)
	if !ok {
		return "", "", false
	}
	pid, rid, ok = strings.Cut(rest, rolesInfix)
	return pid, rid, ok && isID(pid, lowerAlnum) && isID(rid, digit)
}

// SubscriptionURI is the URI of subscription sid of user uid in project pid.
func SubscriptionURI(pid, uid, sid string) string {
	return projectPrefix + pid + usersInfix + uid + subscriptInfix + sid
}

// ObjURI is the URI of metadata object id of project pid.
func ObjURI(pid, id string) string { return mdPrefix + pid + objInfix + id }

// ParseObjURI returns the project and object ids of a metadata object URI.
func ParseObjURI(uri string) (pid, id string, ok bool) {
	rest, ok := strings.CutPrefix(uri, mdPrefix)
	if !ok {
		return "", "", false
	}
	pid, id, ok = strings.Cut(rest, objInfix)
	return pid, id, ok && isID(pid, lowerAlnum) && isID(id, objChar)
}

func alnum(c byte) bool      { return lowerAlnum(c) || 'A' <= c && c <= 'Z' }
func lowerAlnum(c byte) bool { return digit(c) || 'a' <= c && c <= 'z' }
func digit(c byte) bool      { return '0' <= c && c <= '9' }
func objChar(c byte) bool    { return alnum(c) || c == '_' || c == '.' || c == '-' }

// isID reports whether s is one or more bytes that each pass ok.
func isID(s string, ok func(byte) bool) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}
