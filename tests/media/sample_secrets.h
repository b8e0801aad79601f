// What each media sample of make_samples.sh was made with, as byte strings only its location
// metadata holds: an oracle of leaks that does not come from the parsers under test. A redacted
// copy that still holds one of them leaks the location, whichever parser missed it.
#ifndef SCOPEDFS_TESTS_MEDIA_SAMPLE_SECRETS_H_
#define SCOPEDFS_TESTS_MEDIA_SAMPLE_SECRETS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace scopedfs::tests {

struct SampleSecrets {
  std::string name;                  // file name in tests/media
  std::vector<std::string> secrets;  // each is in the sample, and only in its location metadata
};

// Exif rationals of 37°46'29.64" and 122°25'9.84" (the -GPSLatitude and -GPSLongitude given to
// exiftool), in the sample's byte order.
inline std::string ExifRationals(bool big_endian, const std::vector<uint32_t>& values) {
  std::string out;
  for (uint32_t v : values) {
    for (int i = 0; i < 4; ++i) {
      int shift = big_endian ? 24 - 8 * i : 8 * i;
      out.push_back(static_cast<char>((v >> shift) & 0xff));
    }
  }
  return out;
}

// Every sample that carries location, in a fixed order (tests index the first few). The XMP text
// is how exiftool writes the latitude; ISO 6709 text is what ffmpeg and exiftool write in ©xyz and
// keys; a loci box holds 16.16 fixed-point degrees (37.7749 -> 0x0025c65f, -122.4194 ->
// 0xff8594a3).
inline const std::vector<SampleSecrets>& AllSampleSecrets() {
  static const auto* samples = [] {
    const std::string lat_be = ExifRationals(true, {37, 1, 46, 1, 741, 25});
    const std::string lon_be = ExifRationals(true, {122, 1, 25, 1, 246, 25});
    const std::string lat_le = ExifRationals(false, {37, 1, 46, 1, 741, 25});
    const std::string lon_le = ExifRationals(false, {122, 1, 25, 1, 246, 25});
    const std::string xmp_lat = "37,46.494N";
    const std::string xmp_lon = "122,25.164W";
    const std::string loci_lat("\x00\x25\xc6\x5f", 4);
    const std::string loci_lon("\xff\x85\x94\xa3", 4);
    const std::string iso6709 = "+37.7749-122.4194";
    return new std::vector<SampleSecrets>{
        {"gps.jpg", {lat_be, lon_be, xmp_lat, xmp_lon, "GPSLatitude", "GPSLongitude"}},
        {"gps_le.jpg", {lat_le, lon_le}},
        {"gps.png", {lat_be, lon_be, xmp_lat, xmp_lon}},
        {"gps.webp", {lat_be, lon_be, xmp_lat, xmp_lon}},
        {"gps.heic", {lat_be, lon_be, xmp_lat, xmp_lon}},
        {"loc.mp4", {loci_lat, loci_lon}},
        {"loc.mov", {iso6709}},
        {"keys.mov", {iso6709}},
        {"gps.avif", {lat_be, lon_be, xmp_lat, xmp_lon}},
        {"loc.3gp", {loci_lat, loci_lon}},
        {"loc.m4a", {loci_lat, loci_lon}},
    };
  }();
  return *samples;
}

}  // namespace scopedfs::tests

#endif  // SCOPEDFS_TESTS_MEDIA_SAMPLE_SECRETS_H_
