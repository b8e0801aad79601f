// Location finder for the ISO base media file format family (HEIF, AVIF, MP4, MOV, 3GP, M4A): one
// walk finds every kind wherever a common reader (exiftool, ffmpeg) would: Exif and XMP items of
// any meta box, ©xyz/loci/gps boxes and keys/ilst location tags in any user data or meta box, XMP
// and Exif in uuid boxes. It also learns the content class from track handlers and image items.
// Only box headers and small metadata boxes are read, and no table grows with a product of counts.
// The parts: box primitives in isobmff_box, the Exif and XMP items of meta boxes in isobmff_items,
// QuickTime keys and ilst tags in isobmff_movie; this file walks the tree and dispatches.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "media/location/exif_gps.h"
#include "media/location/isobmff_box.h"
#include "media/location/isobmff_items.h"
#include "media/location/isobmff_movie.h"
#include "media/location/location.h"
#include "media/location/scan_reader.h"
#include "media/location/signature_sweep.h"
#include "media/location/xmp_gps.h"

namespace scopedfs::media::isobmff {
namespace {

constexpr uint32_t kMoov = FourCc("moov");
constexpr uint32_t kTrak = FourCc("trak");
constexpr uint32_t kUdta = FourCc("udta");
constexpr uint32_t kIlst = FourCc("ilst");
constexpr uint32_t kKeys = FourCc("keys");
constexpr uint32_t kLoci = FourCc("loci");
constexpr uint32_t kGps = FourCc("gps ");
constexpr uint32_t kGps0 = FourCc("gps0");
constexpr uint32_t kXmpBox = FourCc("XMP_");
constexpr uint32_t kIinf = FourCc("iinf");
constexpr uint32_t kIloc = FourCc("iloc");
constexpr uint32_t kIdat = FourCc("idat");
constexpr uint32_t kHdlr = FourCc("hdlr");
constexpr uint32_t kMdia = FourCc("mdia");
constexpr uint32_t kMinf = FourCc("minf");
constexpr uint32_t kMoof = FourCc("moof");
constexpr uint32_t kTraf = FourCc("traf");
constexpr uint32_t kMeco = FourCc("meco");
constexpr uint32_t kXml = FourCc("xml ");
constexpr uint32_t kCmt4 = FourCc("CMT4");  // Canon: a TIFF whose IFD0 is the GPS IFD
constexpr uint32_t kVide = FourCc("vide");
constexpr uint32_t kSoun = FourCc("soun");
constexpr uint32_t kPict = FourCc("pict");
// Pseudo parent type for the children of Canon's metadata uuid box.
constexpr uint32_t kCanonParent = FourCc("CNuu");

// The extended type under which XMP is stored in a uuid box.
constexpr uint8_t kXmpUuid[16] = {0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8,
                                  0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC};

// Canon's metadata box (CR3 and Canon MP4): CMT1..CMT4 TIFF structures, CMT4 holding GPS.
constexpr uint8_t kCanonUuid[16] = {0x85, 0xC0, 0xB6, 0x87, 0x82, 0x0F, 0x11, 0xE0,
                                    0x81, 0x11, 0xF4, 0xCE, 0x46, 0x2B, 0x6A, 0x48};

// Types that can open the payload of a QuickTime-style meta box, which (unlike the ISO one) has
// no version and flags: seeing one 4 bytes in means the payload starts with a child box.
bool IsMetaChildType(uint32_t type) {
  constexpr uint32_t kTypes[] = {FourCc("hdlr"), FourCc("keys"), FourCc("ilst"), FourCc("iinf"),
                                 FourCc("iloc"), FourCc("pitm"), FourCc("idat"), FourCc("iref"),
                                 FourCc("iprp"), FourCc("dinf"), FourCc("xml "), FourCc("bxml"),
                                 FourCc("free")};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

// Whether `text` holds an ISO 6709 coordinate pair: a sign, two latitude digits (a fraction or
// more digits may follow), then a sign and three longitude digits, as in "+37.7749-122.4194/".
bool HasIso6709(absl::string_view text) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto sign = [](char c) { return c == '+' || c == '-'; };
  for (size_t i = 0; i + 7 <= text.size(); ++i) {
    if (!sign(text[i]) || !digit(text[i + 1]) || !digit(text[i + 2])) continue;
    size_t j = i + 3;
    while (j < text.size() && (digit(text[j]) || text[j] == '.')) ++j;
    if (j + 4 <= text.size() && sign(text[j]) && digit(text[j + 1]) && digit(text[j + 2]) &&
        digit(text[j + 3])) {
      return true;
    }
  }
  return false;
}

// QuickTime's user-data text atoms (©nam, ©day, ©mak, ©mod, ©swr, ...; ©xyz is handled apart) are
// text a reader shows as text: kept, unless a metadata signature or a coordinate is in them.
bool IsPlainTextAtom(uint32_t type, absl::string_view body) {
  return (type >> 24) == 0xA9 && !HasIso6709(body);
}

// A four-character code compared case-insensitively, so that 'LOCI' or 'Xmp_' count too.
bool SameType(uint32_t type, uint32_t want) { return (type | 0x20202020u) == (want | 0x20202020u); }

// Brands of HEIF/AVIF image files, whose items may sit before their meta box (see
// MetaItems::ItemPlace).
bool IsImageBrand(uint32_t brand) {
  constexpr uint32_t kBrands[] = {FourCc("mif1"), FourCc("mif2"), FourCc("msf1"), FourCc("heic"),
                                  FourCc("heix"), FourCc("hevc"), FourCc("hevx"), FourCc("heim"),
                                  FourCc("heis"), FourCc("avif"), FourCc("avis"), FourCc("miaf"),
                                  FourCc("avci"), FourCc("jpeg"), FourCc("MiHE"), FourCc("MiHB")};
  return std::find(std::begin(kBrands), std::end(kBrands), brand) != std::end(kBrands);
}

bool IsTiff(absl::string_view b) {
  return absl::StartsWith(b, absl::string_view("MM\0*", 4)) ||
         absl::StartsWith(b, absl::string_view("II*\0", 4));
}

class Scanner {
 public:
  // `image_format`: the file was sniffed as HEIF or AVIF, so it must start with ftyp, and its
  // items may lie before their meta box (as do files whose ftyp names an image brand).
  Scanner(ByteSource& source, const ScanLimits& limits, bool image_format)
      : r_(source, limits),
        limits_(limits),
        needs_ftyp_(image_format),
        items_(walker_, limits_, image_format, &ranges_, &fallback_) {}

  LocationScan Run() {
    bool first = true;
    walker_.ForEachBox(0, r_.size(), /*top_level=*/true, [&](const Box& box) {
      if (first && box.type == kFtyp && !Ftyp(box)) return false;
      if (needs_ftyp_ && first && box.type != kFtyp) {
        return r_.Fail(box.begin, "HEIF file does not start with an ftyp box");
      }
      first = false;
      if (!items_.AddTopLevel(box)) return false;
      return HandleBox(box, /*parent=*/0);
    });
    if (needs_ftyp_ && first && r_.ok()) r_.Fail(0, "empty HEIF file");
    // Item data can sit anywhere in the file, after boxes the walk has yet to reach as well as
    // before. Parsed during the walk, a failure in it (a read budget spent, say) would end the
    // scan at the item, past boxes never walked, which then neither the ranges nor the fallback
    // [failure point, end) would cover. So items are parsed once the walk is over; their extents
    // are all in the fallback already, so a failure in one covers them all.
    items_.ParseItems();
    items_.FallBackUnlocated();
    LocationScan scan;
    NormalizeRanges(&ranges_);
    NormalizeRanges(&fallback_);
    scan.ranges = std::move(ranges_);
    scan.fallback = std::move(fallback_);
    scan.content_class = ContentClass();
    r_.Finish(&scan);
    return scan;
  }

 private:
  // ftyp: major brand, minor version, compatible brands. An image brand anywhere makes the file
  // a HEIF for item placement, whatever the sniffer (or the name) called it.
  bool Ftyp(const Box& box) {
    const uint64_t n = std::min<uint64_t>(box.end - box.payload, 4096);
    std::string body;
    if (!walker_.ReadAll(box.payload, box.payload + n, &body)) return false;
    for (size_t at = 0; at + 4 <= body.size(); at += 4) {
      if (at == 4) continue;  // the minor version
      if (IsImageBrand(LoadBe32(reinterpret_cast<const uint8_t*>(body.data() + at)))) {
        items_.MarkHeif();
      }
    }
    return true;
  }

  // Boxes anywhere in the walked tree. `parent` is the type of the enclosing box (0 at the top).
  bool HandleBox(const Box& box, uint32_t parent) {
    switch (box.type) {
      case kMoov:
      case kTrak:
      case kUdta:
      case kMdia:
      case kMinf:
      case kMoof:
      case kTraf:
      case kMeco:
        return Container(box, box.type);
      case kMeta:
        return Meta(box);
      case kIlst:
        // An ilst outside a meta box: no keys can name its items, but ©xyz and freeform ones can.
        AddRange(&fallback_, box.payload, box.end, kBox);
        return FindIlstLocation(walker_, box, {}, &ranges_);
      case kHdlr:
        return parent == kMdia ? TrackHandler(box) : true;
      case kUuid:
        return Uuid(box);
      default:
        break;
    }
    if (box.type == kXyz || box.type == kAtXyz || SameType(box.type, kGps) ||
        SameType(box.type, kGps0)) {
      // ©xyz here is a QuickTime user-data text (length, language, ISO 6709 string); gps
      // boxes are vendor formats. Emptying the payload keeps the box walkable.
      AddRange(&ranges_, box.payload, box.end, kBox);
      return true;
    }
    if (SameType(box.type, kLoci)) {
      // Keep version and flags; language, name, coordinates, body and notes all go.
      if (box.end - box.payload < 4) return r_.Fail(box.begin, "loci box too small");
      AddRange(&ranges_, box.payload + 4, box.end, kBox);
      return true;
    }
    if (SameType(box.type, kXmpBox)) return Xmp(box.payload, box.end);
    // Any other box of user data, or of Canon's metadata uuid, is metadata of a kind this walk
    // does not name; what a liberal reader could find in it, this must find too.
    if (parent == kUdta || parent == kCanonParent) return Opaque(box, /*user_data=*/true);
    return true;
  }

  bool Container(const Box& box, uint32_t as) {
    // A failure later on cannot tell which user data was location, so all of it falls back.
    if (box.type == kUdta || as == kCanonParent) AddRange(&fallback_, box.payload, box.end, kBox);
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    const uint32_t saved_handler = track_handler_;
    if (box.type == kTrak) track_handler_ = 0;
    const bool ok = walker_.ForEachBox(box.payload, box.end, false,
                                       [&](const Box& child) { return HandleBox(child, as); });
    if (box.type == kTrak) {
      ++tracks_;
      if (track_handler_ == kVide) saw_video_track_ = true;
      if (track_handler_ == kSoun) ++sound_tracks_;
      if (track_handler_ == kPict) ++picture_tracks_;
      track_handler_ = saved_handler;
    }
    return ok;
  }

  // hdlr (FullBox) of a track's mdia: pre_defined, then the handler type.
  bool TrackHandler(const Box& box) {
    if (box.end - box.payload < 12) return r_.Fail(box.begin, "hdlr box too small");
    return r_.Be32(box.payload + 8, &track_handler_);
  }

  bool Uuid(const Box& box) {
    if (memcmp(box.extended_type, kXmpUuid, sizeof(kXmpUuid)) == 0) {
      return Xmp(box.payload, box.end);
    }
    if (memcmp(box.extended_type, kCanonUuid, sizeof(kCanonUuid)) == 0) {
      return Container(box, kCanonParent);
    }
    return Opaque(box, /*user_data=*/false);
  }

  bool Xmp(uint64_t begin, uint64_t end) {
    AddRange(&fallback_, begin, end, kXmp);
    std::string packet;
    if (!walker_.ReadAll(begin, end, &packet)) return false;
    // An unparsable packet comes back whole in ranges_, which already covers it: no need to
    // fail the file over it.
    FindXmpGps(packet, begin, limits_.max_depth, &ranges_);
    return true;
  }

  // A metadata box of a type the walk does not know (a user-data atom, a vendor uuid, a meta
  // box's xml): exiftool reads Exif and XMP out of several such vendor boxes, so this looks at
  // the bytes. Exif or TIFF at the start is walked for GPS, an XMP packet anywhere is parsed, and
  // a TIFF header elsewhere (Exif in a layout not understood here) makes the file uncertain.
  // Anything else cannot be vouched for either (GoPro's GPMF, JUMBF/C2PA manifests, vendor
  // records): a user-data atom (`user_data`) is filled whole, and so is any other box in which a
  // metadata signature appears. Emptying a payload keeps the box walkable.
  bool Opaque(const Box& box, bool user_data) {
    if (box.end == box.payload) return true;
    std::string body;
    if (!walker_.ReadAll(box.payload, box.end, &body)) return false;
    const absl::string_view b(body);
    const absl::string_view exif_header("Exif\0\0", 6);
    if (box.type == kCmt4 && IsTiff(b) && b.size() > 8) {
      // The TIFF's IFD0 is the GPS IFD itself: empty it all, so it reads as no entries.
      AddRange(&fallback_, box.payload, box.end, kExif);
      AddRange(&ranges_, box.payload + 8, box.end, kExif);
      return true;
    }
    if (absl::StartsWith(b, exif_header) && IsTiff(b.substr(6))) {
      AddRange(&fallback_, box.payload, box.end, kExif);
      return FindTiffGps(r_, box.payload + 6, box.end, &ranges_);
    }
    if (IsTiff(b)) {
      AddRange(&fallback_, box.payload, box.end, kExif);
      return FindTiffGps(r_, box.payload, box.end, &ranges_);
    }
    size_t start = absl::string_view::npos;
    for (absl::string_view marker : {"<?xpacket", "<x:xmpmeta", "<rdf:RDF"}) {
      start = std::min(start, b.find(marker));
    }
    if (start != absl::string_view::npos) {
      // The packet runs to its trailer if there is one, else to the end of the box.
      size_t end = b.size();
      for (absl::string_view trailer : {"</x:xmpmeta>", "</rdf:RDF>"}) {
        const size_t at = b.rfind(trailer);
        if (at != absl::string_view::npos && at > start) {
          end = at + trailer.size();
          break;
        }
      }
      const size_t pi = b.find("<?xpacket end", end);
      if (pi != absl::string_view::npos) {
        const size_t close = b.find("?>", pi);
        if (close != absl::string_view::npos) end = close + 2;
      }
      AddRange(&fallback_, box.payload + start, box.payload + end, kXmp);
      FindXmpGps(b.substr(start, end - start), box.payload + start, limits_.max_depth, &ranges_);
      return true;
    }
    if (b.find(exif_header) != absl::string_view::npos ||
        b.find(absl::string_view("MM\0*", 4)) != absl::string_view::npos ||
        b.find(absl::string_view("II*\0", 4)) != absl::string_view::npos) {
      AddRange(&fallback_, box.payload, box.end, kExif);
      return r_.Fail(box.begin, "metadata box holds Exif in a layout not understood");
    }
    if ((user_data && !IsPlainTextAtom(box.type, b)) || FindMetadataSignature(b)) {
      AddRange(&fallback_, box.payload, box.end, kBox);
      AddRange(&ranges_, box.payload, box.end, kBox);
    }
    return true;
  }

  bool Meta(const Box& box) {
    if (!items_.heif()) AddRange(&fallback_, box.payload, box.end, kBox);
    ScanReader::DepthGuard guard(r_, box.begin);
    if (!guard.ok()) return false;
    uint64_t children = box.payload;
    if (box.end - box.payload >= 8) {
      uint8_t head[8];
      if (!r_.Read(box.payload, 8, head)) return false;
      // The ISO meta box is a FullBox (zero version and flags); QuickTime's is a plain box.
      if (LoadBe32(head) == 0 || !IsMetaChildType(LoadBe32(head + 4))) children += 4;
    } else {
      if (box.end - box.payload < 4) return r_.Fail(box.begin, "meta box too small");
      children += 4;
    }

    // Children are handled in file order, so that when one fails, every child before it has been
    // dealt with and every child after it lies past the failure point. The exceptions wait for
    // boxes that may come later, and so fall back first when they can hold location: ilst needs
    // the keys that name its items; iinf, iloc and idat need each other (only idat holds item
    // data; the items' own extents fall back as soon as they are known).
    std::vector<uint32_t> location_keys;
    std::vector<Box> ilst, iinf, iloc;
    std::optional<Box> idat;
    if (!walker_.ForEachBox(children, box.end, false, [&](const Box& child) {
          switch (child.type) {
            case kKeys:
              return FindLocationKeys(walker_, child, &location_keys);
            case kIlst:
              AddRange(&fallback_, child.payload, child.end, kBox);
              if (!r_.Charge(child.begin, sizeof(Box))) return false;
              ilst.push_back(child);
              return true;
            case kIinf:
              if (!r_.Charge(child.begin, sizeof(Box))) return false;
              iinf.push_back(child);
              return true;
            case kIloc:
              if (!r_.Charge(child.begin, sizeof(Box))) return false;
              iloc.push_back(child);
              return true;
            case kIdat:
              // Item data stored in the meta box itself: if parsing fails before the items are
              // known, it must be covered.
              AddRange(&fallback_, child.payload, child.end, kExif);
              AddRange(&fallback_, child.payload, child.end, kXmp);
              if (idat.has_value()) return r_.Fail(child.begin, "second idat box in a meta box");
              idat = child;
              return true;
            case kXml:
              // ISO meta may carry its metadata as XML (FullBox): XMP there is still XMP.
              return Opaque(child, /*user_data=*/false);
            default:
              return HandleBox(child, kMeta);
          }
        })) {
      return false;
    }
    // keys name the ilst items of QuickTime metadata, wherever the two sit in the meta box.
    std::sort(location_keys.begin(), location_keys.end());
    for (const Box& child : ilst) {
      if (!FindIlstLocation(walker_, child, location_keys, &ranges_)) return false;
    }
    if (!iinf.empty() || !iloc.empty()) {
      if (!items_.Locate(box, iinf, iloc, idat.has_value() ? &*idat : nullptr)) return false;
    }
    return true;
  }

  MediaClass ContentClass() const {
    // One video track proves video even if the walk failed later; the other answers need the
    // whole file, since a later track could be video.
    if (saw_video_track_) return MEDIA_CLASS_VIDEO;
    if (!r_.ok()) return MEDIA_CLASS_UNSPECIFIED;
    if (items_.saw_image_item()) return MEDIA_CLASS_IMAGE;
    if (tracks_ > 0 && sound_tracks_ == tracks_) return MEDIA_CLASS_AUDIO;
    if (tracks_ > 0 && picture_tracks_ == tracks_) return MEDIA_CLASS_IMAGE;
    return MEDIA_CLASS_UNSPECIFIED;
  }

  ScanReader r_;
  const ScanLimits limits_;
  const bool needs_ftyp_;
  std::vector<LocationRange> ranges_;
  std::vector<LocationRange> fallback_;
  BoxWalker walker_{r_, limits_};
  MetaItems items_;             // knows whether the file is a HEIF (items before their meta box)
  uint32_t track_handler_ = 0;  // the handler of the track being walked
  uint32_t tracks_ = 0, sound_tracks_ = 0, picture_tracks_ = 0;
  bool saw_video_track_ = false;
};

}  // namespace
}  // namespace scopedfs::media::isobmff

namespace scopedfs::media {

LocationScan ScanHeif(ByteSource& source, const ScanLimits& limits) {
  return isobmff::Scanner(source, limits, /*image_format=*/true).Run();
}

LocationScan ScanMp4(ByteSource& source, const ScanLimits& limits) {
  return isobmff::Scanner(source, limits, /*image_format=*/false).Run();
}

}  // namespace scopedfs::media
