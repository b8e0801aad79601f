#!/usr/bin/python3
"""Differential test of place-name redaction against exiftool.

exiftool itself writes GPS and place names into real JPEG, PNG, WebP, HEIC and MP4 files at test
time: IPTC IIM City, Sub-location, Province-State, Country code and name, Content Location code
and name (in a JPEG's APP13), and XMP photoshop:City/State/Country, Iptc4xmpCore:Location and
CountryCode, Iptc4xmpExt:LocationCreated and LocationShown (with their City, Sublocation,
ProvinceState, CountryName, CountryCode, WorldRegion, LocationName and GPS members) and
xmpDM:shotLocation, plus QuickTime's location name in an MP4. For each variant
(differential_runner.py judges):

  * exiftool must find a place field or a coordinate in the original ("inert" otherwise);
  * the copy `scopedfsctl scan --redacted_out` writes (every kind filled, as the daemon serves
    under the default redact_place_names) must show exiftool no place field and no coordinate,
    and none of the place values may be left anywhere in its bytes;
  * exiftool must read that copy without an error or a warning the original did not give.

Then the other setting: with only the coordinate kinds filled (`--kinds`, what the daemon fills
under redact_place_names FALSE), every variant keeps its place fields and loses its coordinates.

Usage: differential_places_test.py [--ctl=PATH] [--keep=DIR] [--only=SUBSTRING]
Under bazel the scopedfsctl binary comes from the runfiles (tools/scopedfsctl).
"""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential_image_test  # noqa: E402
import differential_runner  # noqa: E402

# Every place value starts with "Zq" so that it can be found in the bytes too.
IPTC = {
    "IPTC:City": "ZqIptcCity",
    "IPTC:Sub-location": "ZqIptcSub",
    "IPTC:Province-State": "ZqIptcState",
    "IPTC:Country-PrimaryLocationName": "ZqIptcCountry",
    "IPTC:Country-PrimaryLocationCode": "ZqC",
    "IPTC:ContentLocationName": "ZqIptcContent",
    "IPTC:ContentLocationCode": "ZqL",
}
XMP_PHOTOSHOP = {
    "XMP-photoshop:City": "ZqXmpCity",
    "XMP-photoshop:State": "ZqXmpState",
    "XMP-photoshop:Country": "ZqXmpCountry",
}
XMP_CORE = {
    "XMP-iptcCore:Location": "ZqXmpLocation",
    "XMP-iptcCore:CountryCode": "ZqX",
}
XMP_CREATED = {
    "XMP-iptcExt:LocationCreatedCity": "ZqCreatedCity",
    "XMP-iptcExt:LocationCreatedSublocation": "ZqCreatedSub",
    "XMP-iptcExt:LocationCreatedProvinceState": "ZqCreatedState",
    "XMP-iptcExt:LocationCreatedCountryName": "ZqCreatedCountry",
    "XMP-iptcExt:LocationCreatedCountryCode": "ZqK",
    "XMP-iptcExt:LocationCreatedWorldRegion": "ZqCreatedRegion",
    "XMP-iptcExt:LocationCreatedLocationName": "ZqCreatedName",
}
XMP_SHOWN = {
    "XMP-iptcExt:LocationShownCity": "ZqShownCity",
    "XMP-iptcExt:LocationShownSublocation": "ZqShownSub",
    "XMP-iptcExt:LocationShownCountryName": "ZqShownCountry",
    "XMP-iptcExt:LocationShownLocationId": "ZqShownId",
    "XMP-iptcExt:LocationShownGPSLatitude": "37.7749",
    "XMP-iptcExt:LocationShownGPSLongitude": "-122.4194",
}
XMP_DM = {"XMP-xmpDM:ShotLocation": "ZqShot"}
XMP_ALL = {**XMP_PHOTOSHOP, **XMP_CORE, **XMP_CREATED, **XMP_SHOWN, **XMP_DM}
GPS = {"GPSLatitude": "37.7749", "GPSLatitudeRef": "N", "GPSLongitude": "122.4194",
       "GPSLongitudeRef": "W"}

# Variants whose places sit in a container filled whole with the coordinates, whatever
# redact_place_names says.
WHOLE_CONTAINERS = ("png/iptc_raw_profile",)

# Tags exiftool names for a place: what the redacted copy may not list with a value.
PLACE_TAG = re.compile(r"city|sub-?location|state|country|location|worldregion", re.I)
VALUE = re.compile(rb"Zq[A-Za-z]*")


def exiftool_tags(path):
    out = subprocess.run(["exiftool", "-j", "-G1", "-a", "-u", path],
                         capture_output=True, text=True, check=False).stdout
    try:
        return json.loads(out)[0]
    except (ValueError, IndexError):
        return {}


def places(path):
    """Place fields exiftool lists with a non-blank value, and place values left in the bytes."""
    found = {}
    for key, value in exiftool_tags(path).items():
        group, _, name = key.rpartition(":")
        if group in ("System", "File", "ExifTool", "Composite") or "GPS" in name:
            continue
        if PLACE_TAG.search(name) and str(value).strip(" \0"):
            found[key] = value
    with open(path, "rb") as f:
        for value in sorted(set(VALUE.findall(f.read()))):
            found["bytes:" + value.decode()] = "in the file"
    return found


def findings(path):
    found = places(path)
    found.update(differential_image_test.coordinates(path))
    return found


def problems(path):
    tags = exiftool_tags(path)
    return {k: v for k, v in tags.items() if k.split(":")[-1] in ("Error", "Warning")}


def write(base, path, tags):
    with open(path, "wb") as f:
        f.write(base)
    args = [f"-{k}={v}" for k, v in tags.items()]
    res = subprocess.run(["exiftool", "-q", "-q", "-overwrite_original", *args, path],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return None
    with open(path, "rb") as f:
        return f.read()


def prepare_with(work, made):
    """The variants, their oracle and the check of each redacted copy."""
    bases = {}
    for ext in ("jpg", "png", "webp", "heic"):
        path = os.path.join(work, "base." + ext)
        differential_runner.plain_image(path)
        with open(path, "rb") as f:
            bases[ext] = f.read()
    mp4 = os.path.join(work, "base.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc=duration=1:size=32x24:rate=5", "-c:v", "mpeg4", "-fflags",
                    "+bitexact", "-flags:v", "+bitexact", "-y", mp4], check=True)
    with open(mp4, "rb") as f:
        bases["mp4"] = f.read()
    for ext, data in bases.items():
        path = os.path.join(work, "check." + ext)
        with open(path, "wb") as f:
            f.write(data)
        if findings(path):
            print(f"FAIL: the base {ext} already has places or coordinates")
            return 1

    plan = {
        "jpeg/iptc": ("jpg", IPTC),
        "jpeg/iptc_gps": ("jpg", {**IPTC, **GPS}),
        "jpeg/xmp_photoshop": ("jpg", XMP_PHOTOSHOP),
        "jpeg/xmp_iptc_core": ("jpg", XMP_CORE),
        "jpeg/xmp_location_created": ("jpg", XMP_CREATED),
        "jpeg/xmp_location_shown": ("jpg", XMP_SHOWN),
        "jpeg/xmp_shot_location": ("jpg", XMP_DM),
        "jpeg/everything": ("jpg", {**GPS, **IPTC, **XMP_ALL}),
        "png/xmp_gps": ("png", {**GPS, **XMP_ALL}),
        "png/iptc_raw_profile": ("png", {**GPS, **IPTC}),
        "webp/xmp_gps": ("webp", {**GPS, **XMP_ALL}),
        "heic/xmp_gps": ("heic", {**GPS, **XMP_ALL}),
        "mp4/xmp_city": ("mp4", {"XMP-photoshop:City": "ZqMovieCity"}),
        "mp4/xmp_all": ("mp4", XMP_ALL),
        "mp4/keys_location_name": ("mp4", {"Keys:LocationName": "ZqKeysName",
                                           "Keys:GPSCoordinates": "37.7749, -122.4194"}),
    }
    variants = {}
    for name, (ext, tags) in plan.items():
        path = os.path.join(work, name.replace("/", "__") + "." + ext)
        data = write(bases[ext], path, tags)
        if data is None:
            print(f"FAIL: exiftool could not write {name}")
            return 1
        variants[name] = (ext, data)
        made[name] = (ext, path)

    def check(name, red):
        orig = made[name][1]
        new = {k: v for k, v in problems(red).items() if problems(orig).get(k) != v}
        # A compressed container filled whole (keyword and all) cannot inflate: exiftool warns
        # "Error inflating" and reads on. Only a warning, and only for these.
        if name in WHOLE_CONTAINERS:
            new = {k: v for k, v in new.items() if k.endswith("Warning")}
            new = {k: v for k, v in new.items() if not str(v).startswith("Error inflating")}
        if new:
            return f"exiftool reads the copy with {new}"[:160]
        return None

    return variants, findings, check


def coordinates_only(ctl, work, made, only):
    """The redact_place_names FALSE fill: places stay, coordinates go. Returns failures."""
    out_dir = os.path.join(work, "coordinates_only")
    os.makedirs(out_dir, exist_ok=True)
    bad = 0
    for name, (ext, path) in sorted(made.items()):
        if only and only not in name:
            continue
        res = subprocess.run([ctl, "scan", path, f"--redacted_out={out_dir}",
                              "--kinds=exif_gps,xmp_gps,isobmff_location"],
                             capture_output=True, text=True, check=False)
        red = os.path.join(out_dir, os.path.basename(path))
        if res.returncode != 0 or not os.path.exists(red):
            print(f"{name}: coordinates-only scan failed: {res.stderr.strip()}")
            bad += 1
            continue
        # QuickTime's location name is a location tag of its own, and a PNG's IPTC raw profile
        # (compressed hex) is filled whole as a metadata container: both go with the coordinates.
        if name in WHOLE_CONTAINERS:
            continue
        kept = {k for k in places(path) if "Keys" not in k and "bytes:ZqKeys" not in k}
        lost = kept - set(places(red))
        left = differential_image_test.coordinates(red)
        if lost or left:
            print(f"{name}: coordinates only: lost places {sorted(lost)}, kept coordinates {left}")
            bad += 1
    print(f"coordinates only (redact_place_names FALSE): {len(made) - bad} of {len(made)} keep "
          "their places and lose their coordinates")
    return bad


def main(argv):
    made = {}
    rc = differential_runner.main(argv, __doc__, "differential_places_test",
                                  ("exiftool", "convert", "ffmpeg"),
                                  lambda work: prepare_with(work, made), "exiftool")
    args = differential_runner.parse_args(argv, __doc__)
    if rc == 2 or args is None or not made:
        return rc
    ctl, keep, only = args
    ctl = ctl or os.environ.get("SCOPEDFSCTL", "tools/scopedfsctl")
    work = os.path.dirname(next(iter(made.values()))[1])
    if coordinates_only(ctl, work, made, only):
        print("differential_places_test: FAIL")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
