// FindXmpGps on hand-written packets: GPS properties as attributes and elements (with nested
// structures), the XML constructs the tokenizer must step over, and malformed packets, which must
// be redacted whole.
#include "media/location/xmp_gps.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "media/location/location.h"

namespace scopedfs::media {
namespace {

constexpr Redaction kXmp = REDACTION_XMP_GPS;
constexpr int kDepth = 16;

struct Result {
  bool ok;
  std::vector<LocationRange> ranges;
};

Result Find(absl::string_view packet, uint64_t offset = 0, int max_depth = kDepth) {
  Result res;
  res.ok = FindXmpGps(packet, offset, max_depth, &res.ranges);
  return res;
}

// The range covering the first occurrence of `needle` in `packet`, for exact assertions that
// stay readable.
LocationRange RangeOf(absl::string_view packet, absl::string_view needle, uint64_t offset = 0) {
  size_t at = packet.find(needle);
  EXPECT_NE(at, absl::string_view::npos) << needle;
  return {offset + at, offset + at + needle.size(), kXmp};
}

std::string Wrap(absl::string_view body) {
  return absl::StrCat(
      "<?xpacket begin='\xEF\xBB\xBF' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"
      "<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n"
      "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n",
      body,
      "\n</rdf:RDF>\n</x:xmpmeta>\n"
      "<?xpacket end='w'?>");
}

// Applies the fills for `ranges` to `packet` (which starts at file offset `offset`).
std::string Redact(absl::string_view packet, const std::vector<LocationRange>& ranges,
                   uint64_t offset = 0) {
  std::string out(packet);
  std::vector<FillRange> plan = PlanFills(ranges, 1u << kXmp);
  ApplyFills(plan, offset, absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  return out;
}

// Redacting must keep every byte outside the ranges, blank the inside with spaces, and leave a
// packet that still parses and has no GPS left.
void ExpectCleanRedaction(absl::string_view packet, const std::vector<LocationRange>& ranges,
                          uint64_t offset) {
  std::string redacted = Redact(packet, ranges, offset);
  ASSERT_EQ(redacted.size(), packet.size());
  for (size_t i = 0; i < packet.size(); ++i) {
    bool inside = false;
    for (const LocationRange& r : ranges) inside |= offset + i >= r.begin && offset + i < r.end;
    EXPECT_EQ(redacted[i], inside ? ' ' : packet[i]) << "byte " << i;
  }
  Result again = Find(redacted, offset);
  EXPECT_TRUE(again.ok);
  EXPECT_TRUE(again.ranges.empty());
  EXPECT_EQ(redacted.find("GPS"), std::string::npos) << redacted;
}

TEST(FindXmpGpsTest, AttributeForm) {
  const std::string attr1 = "exif:GPSLatitude=\"37,46.494N\"";
  const std::string attr2 = "exif:GPSLongitude='122,25.164W'";
  const std::string packet = Wrap(absl::StrCat(
      "<rdf:Description rdf:about=''\n  xmlns:exif='http://ns.adobe.com/exif/1.0/'\n  ", attr1,
      "\n  tiff:Make='Pixel'\n  ", attr2, "/>"));
  constexpr uint64_t kOffset = 1000;
  Result res = Find(packet, kOffset);
  ASSERT_TRUE(res.ok);
  std::vector<LocationRange> want = {RangeOf(packet, attr1, kOffset),
                                     RangeOf(packet, attr2, kOffset)};
  EXPECT_EQ(res.ranges, want);
  ExpectCleanRedaction(packet, res.ranges, kOffset);
  EXPECT_NE(Redact(packet, res.ranges, kOffset).find("tiff:Make='Pixel'"), std::string::npos);
}

TEST(FindXmpGpsTest, ElementFormWithNestedStructure) {
  const std::string lat = "<exif:GPSLatitude>37,46.494N</exif:GPSLatitude>";
  const std::string stamp =
      "<exif:GPSTimeStamp>\n   <rdf:Seq>\n    <rdf:li>2024-01-01T10:00:00Z</rdf:li>\n"
      "    <rdf:li><![CDATA[ <not-a-tag> ]]></rdf:li>\n   </rdf:Seq>\n  </exif:GPSTimeStamp>";
  const std::string empty = "<exifEX:GPSHPositioningError rdf:resource='x'/>";
  const std::string packet = Wrap(absl::StrCat(
      "<rdf:Description rdf:about=''>\n  <dc:title><rdf:Alt><rdf:li xml:lang='x-default'>"
      "Bridge</rdf:li></rdf:Alt></dc:title>\n  ",
      lat, "\n  ", stamp, "\n  ", empty, "\n</rdf:Description>"));
  Result res = Find(packet);
  ASSERT_TRUE(res.ok);
  std::vector<LocationRange> want = {RangeOf(packet, lat), RangeOf(packet, stamp),
                                     RangeOf(packet, empty)};
  EXPECT_EQ(res.ranges, want);
  ExpectCleanRedaction(packet, res.ranges, 0);
}

TEST(FindXmpGpsTest, GpsElementAttributesAreCoveredOnce) {
  const std::string element =
      "<exif:GPSAltitude exif:GPSAltitudeRef='0' rdf:parseType='Resource'>"
      "<rdf:value>12/1</rdf:value></exif:GPSAltitude>";
  const std::string packet = Wrap(absl::StrCat("<rdf:Description>", element, "</rdf:Description>"));
  Result res = Find(packet);
  ASSERT_TRUE(res.ok);
  std::vector<LocationRange> want = {RangeOf(packet, element)};
  EXPECT_EQ(res.ranges, want);
}

TEST(FindXmpGpsTest, OtherSchemasAndAnyCase) {
  const std::string dji = "drone-dji:GpsLatitude=\"22.5\"";
  const std::string bare = "<GPSLongitude>1</GPSLongitude>";
  const std::string packet =
      Wrap(absl::StrCat("<rdf:Description ", dji, ">", bare, "</rdf:Description>"));
  Result res = Find(packet);
  ASSERT_TRUE(res.ok);
  std::vector<LocationRange> want = {RangeOf(packet, dji), RangeOf(packet, bare)};
  EXPECT_EQ(res.ranges, want);
}

TEST(FindXmpGpsTest, NotGps) {
  // A namespace declaration, GPS words in text, comments and processing instructions, a prefix
  // named GPS.
  const std::string packet = Wrap(
      "<rdf:Description xmlns:GPSns='urn:x' dc:title='a>b GPSLatitude'>"
      "<!-- <exif:GPSLatitude>1</exif:GPSLatitude> -->"
      "<?gps <exif:GPSLatitude> ?>"
      "<GPSns:Latitude>not a GPS name</GPSns:Latitude>"
      "<dc:description>GPSLatitude 37N</dc:description>"
      "</rdf:Description>");
  Result res = Find(packet);
  EXPECT_TRUE(res.ok);
  EXPECT_TRUE(res.ranges.empty());
}

// ---- Place names ----

constexpr Redaction kPlace = REDACTION_XMP_PLACE;

LocationRange PlaceOf(absl::string_view packet, absl::string_view needle) {
  LocationRange r = RangeOf(packet, needle);
  r.kind = kPlace;
  return r;
}

std::string FillKinds(absl::string_view packet, const std::vector<LocationRange>& ranges,
                      uint32_t kinds) {
  std::string out(packet);
  std::vector<LocationRange> sorted = ranges;
  NormalizeRanges(&sorted);
  ApplyFills(PlanFills(sorted, kinds), 0,
             absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  return out;
}

TEST(IsXmpPlaceNameTest, PlacePropertiesInAnyNamespaceAndCase) {
  for (absl::string_view name :
       {"photoshop:City", "photoshop:State", "photoshop:Country", "Iptc4xmpCore:Location",
        "Iptc4xmpCore:CountryCode", "Iptc4xmpExt:LocationCreated", "Iptc4xmpExt:LocationShown",
        "Iptc4xmpExt:City", "Iptc4xmpExt:Sublocation", "Iptc4xmpExt:ProvinceState",
        "Iptc4xmpExt:CountryName", "Iptc4xmpExt:CountryCode", "Iptc4xmpExt:WorldRegion",
        "Iptc4xmpExt:LocationName", "Iptc4xmpExt:LocationId", "xmpDM:shotLocation", "ps:CITY",
        "City"}) {
    EXPECT_TRUE(IsXmpPlaceName(name)) << name;
  }
  for (absl::string_view name :
       {"Iptc4xmpCore:CiAdrCity", "Iptc4xmpCore:CreatorContactInfo", "dc:title", "City:title",
        "photoshop:Cityscape", "xmp:Rating", "exif:GPSLatitude", ""}) {
    EXPECT_FALSE(IsXmpPlaceName(name)) << name;
  }
}

TEST(FindXmpGpsTest, PlaceNamesAsAttributesAndElements) {
  const std::string city = "photoshop:City='Zzcity'";
  const std::string state = "photoshop:State=\"Zzstate\"";
  const std::string country = "<photoshop:Country>Zzcountry</photoshop:Country>";
  const std::string location =
      "<Iptc4xmpCore:Location><rdf:Alt><rdf:li xml:lang='x-default'>Zzloc</rdf:li></rdf:Alt>"
      "</Iptc4xmpCore:Location>";
  const std::string code = "<Iptc4xmpCore:CountryCode/>";
  const std::string shot = "<xmpDM:shotLocation>Zzshot</xmpDM:shotLocation>";
  const std::string packet = Wrap(absl::StrCat(
      "<rdf:Description rdf:about='' xmlns:City='urn:not-a-place' ", city, "\n  xmp:Rating='3' ",
      state, ">\n", country, location, code, "<dc:title>Zzcity street</dc:title>", shot,
      "<Iptc4xmpCore:CiAdrCity>Creator's own city</Iptc4xmpCore:CiAdrCity>", "</rdf:Description>"));
  Result res = Find(packet);
  ASSERT_TRUE(res.ok);
  std::vector<LocationRange> want = {PlaceOf(packet, city),    PlaceOf(packet, state),
                                     PlaceOf(packet, country), PlaceOf(packet, location),
                                     PlaceOf(packet, code),    PlaceOf(packet, shot)};
  EXPECT_EQ(res.ranges, want);
  std::string out = FillKinds(packet, res.ranges, 1u << kPlace);
  for (absl::string_view gone : {"Zzstate", "Zzcountry", "Zzloc", "Zzshot", "photoshop:City"}) {
    EXPECT_EQ(out.find(std::string(gone)), std::string::npos) << gone;
  }
  for (absl::string_view kept :
       {"xmp:Rating='3'", "Zzcity street", "Creator's own city", "xmlns:City='urn:not-a-place'"}) {
    EXPECT_NE(out.find(std::string(kept)), std::string::npos) << kept;
  }
  Result again = Find(out);
  EXPECT_TRUE(again.ok);
  EXPECT_TRUE(again.ranges.empty());
}

TEST(FindXmpGpsTest, LocationStructuresGoWholeAndTheirGpsStaysGps) {
  const std::string gps = "<exif:GPSLatitude>48,51.4N</exif:GPSLatitude>";
  const std::string gps_attr = "exif:GPSLongitude='2,17.6E'";
  const std::string shown = absl::StrCat(
      "<Iptc4xmpExt:LocationShown><rdf:Bag><rdf:li rdf:parseType='Resource'>"
      "<Iptc4xmpExt:City>Zzparis</Iptc4xmpExt:City><Iptc4xmpExt:Sublocation>Zztower"
      "</Iptc4xmpExt:Sublocation>",
      gps, "</rdf:li><rdf:li Iptc4xmpExt:WorldRegion='Zzeurope' ", gps_attr,
      "/></rdf:Bag></Iptc4xmpExt:LocationShown>");
  const std::string created =
      "<Iptc4xmpExt:LocationCreated Iptc4xmpExt:CountryName='Zzfrance' "
      "Iptc4xmpExt:ProvinceState='Zzidf'/>";
  const std::string member = "Iptc4xmpExt:CountryCode='ZZF'";
  const std::string packet =
      Wrap(absl::StrCat("<rdf:Description ", member, ">", shown, created, "</rdf:Description>"));
  Result res = Find(packet);
  ASSERT_TRUE(res.ok);
  std::vector<LocationRange> want = {PlaceOf(packet, member), PlaceOf(packet, shown),
                                     RangeOf(packet, gps), RangeOf(packet, gps_attr),
                                     PlaceOf(packet, created)};
  std::vector<LocationRange> got = res.ranges;
  NormalizeRanges(&got);
  NormalizeRanges(&want);
  EXPECT_EQ(got, want);
  // Coordinates alone (redact_place_names FALSE): the GPS inside the structure goes, the places
  // stay, and the packet still parses.
  std::string coords = FillKinds(packet, res.ranges, 1u << kXmp);
  EXPECT_EQ(coords.find("GPS"), std::string::npos);
  EXPECT_NE(coords.find("Zzparis"), std::string::npos);
  EXPECT_TRUE(Find(coords).ok);
  // Both: nothing of either.
  std::string both = FillKinds(packet, res.ranges, (1u << kXmp) | (1u << kPlace));
  for (absl::string_view gone :
       {"GPS", "Zzparis", "Zztower", "Zzeurope", "Zzfrance", "Zzidf", "ZZF", "Location"}) {
    EXPECT_EQ(both.find(std::string(gone)), std::string::npos) << gone;
  }
  Result again = Find(both);
  EXPECT_TRUE(again.ok);
  EXPECT_TRUE(again.ranges.empty());
}

TEST(FindXmpGpsTest, PlacesInsideGpsAreCoveredByIt) {
  const std::string element =
      "<exif:GPSAreaInformation><photoshop:City>Zzcity</photoshop:City></exif:GPSAreaInformation>";
  const std::string packet = Wrap(absl::StrCat("<rdf:Description>", element, "</rdf:Description>"));
  Result res = Find(packet);
  ASSERT_TRUE(res.ok);
  std::vector<LocationRange> want = {RangeOf(packet, element)};
  EXPECT_EQ(res.ranges, want);
}

TEST(FindXmpGpsTest, EmptyAndTextOnlyPacketsAreClean) {
  for (absl::string_view packet : {"", "   \n\t", "just text, no markup"}) {
    Result res = Find(packet);
    EXPECT_TRUE(res.ok) << packet;
    EXPECT_TRUE(res.ranges.empty());
  }
}

TEST(FindXmpGpsTest, TrailingPaddingAfterThePacketIsFine) {
  std::string packet = Wrap("<rdf:Description exif:GPSLatitude='1'/>");
  packet += std::string(2048, ' ') + std::string(3, '\0');
  Result res = Find(packet);
  EXPECT_TRUE(res.ok);
  EXPECT_EQ(res.ranges.size(), 1u);
}

TEST(FindXmpGpsTest, DepthLimit) {
  // Wrap() opens 2 elements; rdf:Description and the GPS element make 4.
  const std::string packet =
      Wrap("<rdf:Description><exif:GPSLatitude>1</exif:GPSLatitude></rdf:Description>");
  EXPECT_TRUE(Find(packet, 0, 4).ok);
  Result res = Find(packet, 0, 3);
  EXPECT_FALSE(res.ok);
  std::vector<LocationRange> whole = {{0, packet.size(), kXmp}};
  EXPECT_EQ(res.ranges, whole);
}

TEST(FindXmpGpsTest, MalformedPacketsAreRedactedWhole) {
  const char* const kBad[] = {
      "<a><b></a>",                  // mismatched end tag
      "<a><b></b>",                  // unclosed element
      "</a>",                        // stray end tag
      "<a></a></a>",                 // one end tag too many
      "<a><!-- unterminated</a>",    // comment
      "<a><!--></a>",                // "<!-->" is not a comment
      "<a><![CDATA[ x ]></a>",       // CDATA
      "<?xpacket begin='' <a></a>",  // processing instruction
      "<!DOCTYPE a [<!ENTITY e 'x'>]><a/>",
      "<a b='unterminated></a>",  // attribute quote
      "<a b=unquoted></a>",       // attribute value
      "<a b></a>",                // attribute without value
      "<a b='1'c='2'></a>",       // no space between attributes
      "<a/ >",                    // stray slash
      "<a",                       // unterminated start tag
      "<a></a",                   // unterminated end tag
      "< a></a>",                 // empty name
      "<a></a><",                 // '<' at the end
  };
  constexpr uint64_t kOffset = 77;
  for (absl::string_view bad : kBad) {
    std::vector<LocationRange> ranges = {{1, 2, kXmp}};  // appended to, not replaced
    EXPECT_FALSE(FindXmpGps(bad, kOffset, kDepth, &ranges)) << bad;
    std::vector<LocationRange> want = {{1, 2, kXmp}, {kOffset, kOffset + bad.size(), kXmp}};
    EXPECT_EQ(ranges, want) << bad;
  }
}

TEST(FindXmpGpsTest, Utf16PacketsFailClosed) {
  const std::string utf8 = Wrap(
      "<rdf:Description><exif:GPSLatitude>1</exif:GPSLatitude>"
      "</rdf:Description>");
  std::string utf16;
  for (char c : utf8) {
    utf16.push_back(c);
    utf16.push_back('\0');
  }
  Result res = Find(utf16);
  EXPECT_FALSE(res.ok);
  std::vector<LocationRange> whole = {{0, utf16.size(), kXmp}};
  EXPECT_EQ(res.ranges, whole);
}

TEST(FindXmpGpsTest, EveryPrefixEitherParsesOrIsRedactedWhole) {
  const std::string packet = Wrap(
      "<rdf:Description exif:GPSLatitude='1' tiff:Make='x'>"
      "<exif:GPSTimeStamp><rdf:Seq><rdf:li>t</rdf:li></rdf:Seq></exif:GPSTimeStamp>"
      "<!-- c --><![CDATA[d]]></rdf:Description>");
  const size_t root_start = packet.find("<x:xmpmeta");
  const size_t root_closed = packet.find("</x:xmpmeta>") + strlen("</x:xmpmeta>");
  for (size_t n = 0; n <= packet.size(); ++n) {
    absl::string_view prefix = absl::string_view(packet).substr(0, n);
    Result res = Find(prefix, 5);
    if (!res.ok) {
      std::vector<LocationRange> whole = {{5, 5 + n, kXmp}};
      EXPECT_EQ(res.ranges, whole) << n;
    } else {
      for (const LocationRange& r : res.ranges) EXPECT_LE(r.end, 5 + n) << n;
    }
    // Once the root element has started, nothing is balanced before it closes.
    if (n > root_start && n < root_closed) {
      EXPECT_FALSE(res.ok) << n;
    }
  }
}

}  // namespace
}  // namespace scopedfs::media
