// XMP GPS and place finder (see xmp_gps.h): a small single-pass XML tokenizer that tracks the open
// elements and reports GPS and place properties in element and attribute form. Anything it does not
// understand makes it give up on the whole packet, so a lenient reader can never see what it
// skipped.
#include "media/location/xmp_gps.h"

#include <cstddef>
#include <vector>

#include "absl/strings/match.h"
#include "media/location/scan_reader.h"

namespace scopedfs::media {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Stops a name. NUL is included so that UTF-16/32 packets (which the XMP spec allows outside
// JPEG, but no common writer produces) fail instead of parsing as names we cannot match.
bool EndsName(char c) {
  return IsSpace(c) || c == '/' || c == '>' || c == '<' || c == '=' || c == '"' || c == '\'' ||
         c == '\0';
}

absl::string_view LocalName(absl::string_view name) {
  size_t colon = name.rfind(':');
  return colon == absl::string_view::npos ? name : name.substr(colon + 1);
}

// Whether a property name is GPS: its local part starts with "GPS", in any case, which covers the
// Exif schema (exif:GPSLatitude, exif:GPSTimeStamp, ...), exifEX and vendor schemas such as
// drone-dji:GpsLatitude.
bool IsGpsName(absl::string_view name) {
  absl::string_view local = LocalName(name);
  return absl::StartsWithIgnoreCase(local, "gps");
}

}  // namespace

bool IsXmpPlaceName(absl::string_view name) {
  // photoshop:City/State/Country, Iptc4xmpCore:Location/CountryCode, Iptc4xmpExt:LocationCreated
  // and LocationShown and the members of their Location structures, xmpDM:shotLocation.
  static constexpr absl::string_view kPlaces[] = {"City",          "State",       "Country",
                                                  "Location",      "CountryCode", "LocationCreated",
                                                  "LocationShown", "Sublocation", "ProvinceState",
                                                  "CountryName",   "WorldRegion", "LocationName",
                                                  "LocationId",    "shotLocation"};
  absl::string_view local = LocalName(name);
  for (absl::string_view place : kPlaces) {
    if (absl::EqualsIgnoreCase(local, place)) return true;
  }
  return false;
}

namespace {

// A namespace declaration such as xmlns:GPSfoo="..." is not a property: blanking it would unbind
// a prefix that other elements use.
bool IsNamespaceDeclaration(absl::string_view name) {
  return name == "xmlns" || absl::StartsWith(name, "xmlns:");
}

class XmpScanner {
 public:
  XmpScanner(absl::string_view packet, uint64_t offset, int max_depth)
      : s_(packet), offset_(offset), max_depth_(max_depth) {}

  // Scans the whole packet; false if it is not XML we can vouch for.
  bool Run() {
    while (true) {
      size_t lt = s_.find('<', i_);
      if (lt == absl::string_view::npos) break;
      i_ = lt;
      absl::string_view rest = s_.substr(i_);
      bool ok;
      if (absl::StartsWith(rest, "<?")) {
        ok = SkipPast(2, "?>");
      } else if (absl::StartsWith(rest, "<!--")) {
        ok = SkipPast(4, "-->");
      } else if (absl::StartsWith(rest, "<![CDATA[")) {
        ok = SkipPast(9, "]]>");
      } else if (absl::StartsWith(rest, "<!")) {
        // DOCTYPE (entities could redefine what the packet says) and anything else XMP forbids.
        ok = false;
      } else if (absl::StartsWith(rest, "</")) {
        ok = EndTag();
      } else {
        ok = StartTag();
      }
      if (!ok) return false;
    }
    return open_.empty();
  }

  const std::vector<LocationRange>& found() const { return found_; }

 private:
  struct Open {
    absl::string_view name;
    size_t start;  // index of the start tag's '<'
    bool gps;
    bool place;
  };

  // Skips a construct that opens with `opener_size` bytes at i_, so that "<!-->" is not taken
  // for a whole comment.
  bool SkipPast(size_t opener_size, absl::string_view terminator) {
    size_t at = s_.find(terminator, i_ + opener_size);
    if (at == absl::string_view::npos) return false;
    i_ = at + terminator.size();
    return true;
  }

  void SkipSpace() {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
  }

  absl::string_view Name() {
    size_t start = i_;
    while (i_ < s_.size() && !EndsName(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }

  bool At(char c) const { return i_ < s_.size() && s_[i_] == c; }

  // Inside a GPS element everything is covered by that element's range already.
  bool InsideGps() const { return gps_open_ > 0; }
  // Inside a place element (a Location structure) every place is covered; GPS is still reported
  // on its own, so that it is filled when place names are not.
  bool InsidePlace() const { return place_open_ > 0; }

  void Found(size_t begin, size_t end, Redaction kind = REDACTION_XMP_GPS) {
    AddRange(&found_, offset_ + begin, offset_ + end, kind);
  }

  // Reports a whole element (or attribute) that was GPS or a place, unless an enclosing one
  // already covers it.
  void FoundProperty(size_t begin, size_t end, bool gps, bool place) {
    if (gps && !InsideGps()) Found(begin, end);
    if (place && !InsideGps() && !InsidePlace()) Found(begin, end, REDACTION_XMP_PLACE);
  }

  bool StartTag() {
    size_t start = i_++;
    absl::string_view name = Name();
    if (name.empty()) return false;
    bool gps = IsGpsName(name);
    bool place = !gps && IsXmpPlaceName(name);
    while (true) {
      size_t before_space = i_;
      SkipSpace();
      if (At('>')) {
        ++i_;
        open_.push_back({name, start, gps, place});
        if (gps) ++gps_open_;
        if (place) ++place_open_;
        return open_.size() <= static_cast<size_t>(max_depth_);
      }
      if (At('/')) {
        ++i_;
        if (!At('>')) return false;
        ++i_;
        FoundProperty(start, i_, gps, place);
        return true;
      }
      if (i_ == before_space) return false;  // attributes need space before them (or EOF)
      size_t attr_start = i_;
      absl::string_view attr = Name();
      if (attr.empty()) return false;
      SkipSpace();
      if (!At('=')) return false;
      ++i_;
      SkipSpace();
      if (!At('"') && !At('\'')) return false;
      size_t close = s_.find(s_[i_], i_ + 1);
      if (close == absl::string_view::npos) return false;
      i_ = close + 1;
      // Attributes of a GPS element are inside its range, and places inside a place's.
      if (!gps && !IsNamespaceDeclaration(attr)) {
        bool attr_gps = IsGpsName(attr);
        FoundProperty(attr_start, i_, attr_gps, !place && !attr_gps && IsXmpPlaceName(attr));
      }
    }
  }

  bool EndTag() {
    i_ += 2;
    absl::string_view name = Name();
    SkipSpace();
    if (!At('>')) return false;
    ++i_;
    if (open_.empty() || open_.back().name != name) return false;
    Open closed = open_.back();
    open_.pop_back();
    if (closed.gps) --gps_open_;
    if (closed.place) --place_open_;
    FoundProperty(closed.start, i_, closed.gps, closed.place);
    return true;
  }

  absl::string_view s_;
  uint64_t offset_;
  int max_depth_;
  size_t i_ = 0;
  std::vector<Open> open_;
  int gps_open_ = 0;    // GPS elements among open_
  int place_open_ = 0;  // place elements among open_
  std::vector<LocationRange> found_;
};

}  // namespace

bool FindXmpGps(absl::string_view packet, uint64_t packet_offset, int max_depth,
                std::vector<LocationRange>* out) {
  XmpScanner scanner(packet, packet_offset, max_depth);
  if (!scanner.Run()) {
    AddRange(out, packet_offset, packet_offset + packet.size(), REDACTION_XMP_GPS);
    return false;
  }
  out->insert(out->end(), scanner.found().begin(), scanner.found().end());
  return true;
}

}  // namespace scopedfs::media
