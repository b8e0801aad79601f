// Whether two names are one name to a casefolded ext4 lower (Android's /data/media), for the names
// a policy's layout declares (ASCII: "Music", "Android", "data"). ext4's utf8 casefolding
// normalizes a name (NFD) and folds it by Unicode's full case folding, so besides A-Z a few
// other code points become ASCII letters and meet an ASCII name: "Muſic" (long s) is Music,
// "Notiﬁcations" (the fi ligature) is Notifications, "Audiobooks" with the Kelvin sign is
// Audiobooks; and it drops default-ignorable code points ("Mu<U+200B>sic", with a zero-width
// space, is Music). This folds exactly those; any other non-ASCII code point is compared as it is,
// so names that fold together only outside ASCII ("É" and "é") are told apart here: no layout name
// is such a name (the config loader allows only ASCII in them).
#ifndef SCOPEDFS_BASE_FOLDED_NAME_H_
#define SCOPEDFS_BASE_FOLDED_NAME_H_

#include <string>

#include "absl/strings/string_view.h"

namespace scopedfs::base {

// True when `a` and `b` fold to one name as above (ASCII letters without case, and the code
// points whose ext4 folding is ASCII: U+00DF, U+017F, U+1E9E, U+212A, U+FB00-U+FB06 and the
// singletons U+037E and U+1FEF; the default-ignorable code points fold to nothing). Allocates
// nothing. Bytes that are not valid UTF-8 compare as
// themselves, as ext4 compares a name it cannot decode.
bool FoldsTogether(absl::string_view a, absl::string_view b);

// Whether `name` holds one of those code points, so that its fold is not its ASCII lowering.
bool FoldsBeyondAscii(absl::string_view name);

// The fold of `name`: what FoldsTogether compares.
std::string FoldedName(absl::string_view name);

// Whether `name` is all ASCII (what a layout name must be).
bool IsAsciiName(absl::string_view name);

}  // namespace scopedfs::base

#endif  // SCOPEDFS_BASE_FOLDED_NAME_H_
