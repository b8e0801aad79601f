"""The media parsers' source lists, each written only here.

media/BUILD and media/location/BUILD build their cc_library from these lists, and tools/fuzz.sh,
which compiles the same sources into the libFuzzer targets with clang outside bazel, reads them
from this file too (with sed: keep one quoted file name per line, and the closing bracket alone
on its line). Names are relative to the list's package.
"""

# //media:content_facts (files in media/): format sniffing and the content facts rules match on.
MEDIA_SRCS = [
    "content_facts.cc",
]

MEDIA_HDRS = [
    "content_facts.h",
]

# //media/location:location (files in media/location/): the location finders and the range
# arithmetic of the redacted views.
LOCATION_SRCS = [
    "exif_gps.cc",
    "image_blocks.cc",
    "image_location.cc",
    "iptc_place.cc",
    "isobmff_box.cc",
    "isobmff_items.cc",
    "isobmff_location.cc",
    "isobmff_movie.cc",
    "location.cc",
    "png_location.cc",
    "scan_reader.cc",
    "signature_sweep.cc",
    "trailer.cc",
    "unparsed_location.cc",
    "xmp_gps.cc",
]

LOCATION_HDRS = [
    "exif_gps.h",
    "iptc_place.h",
    "location.h",
    "scan_reader.h",
    "xmp_gps.h",
]

# Headers private to //media/location (the parts of the ISO-BMFF walk): in the library's srcs and
# its fuzz_sources (fuzz.sh compiles only the .cc lists; its include path finds these).
LOCATION_PRIVATE_HDRS = [
    "image_blocks.h",
    "isobmff_box.h",
    "isobmff_items.h",
    "isobmff_movie.h",
    "signature_sweep.h",
    "trailer.h",
]
