# Sourced by device_check.sh on the first boot: which names ext4's utf8 casefolding takes for one
# name, asked of the guest's kernel, and the daemon judging a name by what the lower takes it for.
# 1. The kernel as the oracle: in a casefolded scratch directory on /data/media (hidden from every
#    app: no user's storage), each ASCII name is made and each spelling looked up. The daemon's
#    fold (policy/folded_name.h) says which spellings meet which names; the kernel must agree.
# 2. Through the mount, as apps: a default top-level directory under a folded spelling ("Muſic",
#    long s) is that directory to the layout rules (not renamed or removed, takes audio), and a
#    spelling that does not fold to one ("Documenſ" is "documens") is a custom name.
oracle=/data/media/.casefold-oracle
rm -rf "$oracle"
mkdir "$oracle"
check casefold-oracle-dir "a new directory under /data/media inherits casefold (lsattr shows F)" \
  bash -c "lsattr -d $oracle | grep -q '^[^ ]*F' || lsattr -d $oracle"
# ASCII name | spelling | same or apart (what folded_name.h says)
pairs=(
  "Music|Mu"$'\xc5\xbf'"ic|same"            # LATIN SMALL LETTER LONG S
  "Music|MU"$'\xc5\xbf'"IC|same"
  "Documents|Document"$'\xc5\xbf'"|same"
  "Documents|Documen"$'\xc5\xbf'"|apart"    # folds to "documens"
  "Notifications|Noti"$'\xef\xac\x81'"cations|same"   # fi ligature
  "Podcasts|Podca"$'\xef\xac\x86'"s|same"       # st ligature
  "Audiobooks|Audioboo"$'\xe2\x84\xaa'"s|same"  # KELVIN SIGN
  "gross|gro"$'\xc3\x9f'"|same"             # sharp s, full folding
  "gross|GRO"$'\xe1\xba\x9e'"|same"             # capital sharp s
  "a;|a"$'\xcd\xbe'"|same"                  # GREEK QUESTION MARK (NFD)
  "Music|M"$'\xc3\xba'"sic|apart"           # u with acute: not u
  "Music|Mus"$'\xc4\xb1'"c|apart"           # dotless i: no fold
  "Pictures|Pi"$'\xd1\x81'"tures|apart"     # Cyrillic es
  # Default-ignorable code points, which this kernel's utf8 tables drop (Linux 6.13 stopped):
  "Music|Mu"$'\xe2\x80\x8b'"sic|same"        # ZERO WIDTH SPACE
  "Music|Mu"$'\xc2\xad'"sic|same"             # SOFT HYPHEN
  "Music|Mus"$'\xe2\x80\x8d'"ic|same"        # ZERO WIDTH JOINER
  "Music|"$'\xef\xbb\xbf'"Music|same"        # ZERO WIDTH NO-BREAK SPACE (BOM)
  "Music|Music"$'\xe2\x81\xa0'"|same"        # WORD JOINER
  "Music|Mu"$'\xe2\x80\x8a'"sic|apart"       # HAIR SPACE: not ignorable
)
oracle_bad=""
for p in "${pairs[@]}"; do
  IFS='|' read -r ascii spelling want <<<"$p"
  mkdir "$oracle/$ascii"
  if [[ "$(stat -c %i "$oracle/$spelling" 2>/dev/null)" == "$(stat -c %i "$oracle/$ascii")" ]]; then got=same; else got=apart; fi
  rmdir "$oracle/$ascii"
  say "INFO ext4 casefold: $ascii / $spelling: $got"
  [[ $got == "$want" ]] || oracle_bad+="$ascii/$spelling: ext4 $got, the daemon's fold $want; "
done
rm -rf "$oracle"
check casefold-oracle "the guest kernel's ext4 folds each spelling as the daemon's fold does" \
  bash -c '[[ -z $1 ]] || { echo "$1"; false; }' _ "$oracle_bad"

S=/storage/emulated/0
L=/data/media/0
ls_=$'\xc5\xbf'
music=Mu${ls_}ic
check casefold-finds "the music app lists Music's song through $music" \
  bash -c "setpriv --reuid=10063 --regid=10063 --clear-groups ls $S/$music | grep -qx Example_Band-Sine_in_A.mp3"
# The layout's rules apply to the folded name: a default directory is neither moved nor removed
# under a folded spelling, even by the all-files app, whose rules would let it do either to a
# custom directory.
answer casefold-rename-default "the files app renames $music (Music) into Download" EPERM 10064 rename "$S/$music" "$S/Download/moved-music"
zwsp=Mu$'\xe2\x80\x8b'sic
answer casefold-rename-ignorable "the files app renames Mu<U+200B>sic (Music) into Download" EPERM 10064 rename "$S/$zwsp" "$S/Download/moved-music"
answer casefold-rename-default-plain "the files app renames Music into Download" EPERM 10064 rename "$S/Music" "$S/Download/moved-music"
podcasts=Podca$'\xef\xac\x86's
answer casefold-rmdir-default "the files app removes the empty $podcasts (Podcasts)" EPERM 10064 rmdir "$S/$podcasts"
check casefold-defaults-stay "Music and Podcasts are still there, nothing moved into Download" \
  bash -c "[[ -d $L/Music && -d $L/Podcasts && ! -e $L/Download/moved-music ]]"
# What a default directory takes it takes under a folded spelling: the camera app (no
# permissions) may create audio in Music and a subdirectory anywhere below a default directory.
answer casefold-create-audio "the camera app creates $music/answers.mp3" ok 10065 create "$S/$music/answers.mp3" 600
answer casefold-mkdir-below "the camera app makes $music/answers-sub" ok 10065 mkdir "$S/$music/answers-sub" 700
check casefold-landed "both landed in the lower's Music" test -f "$L/Music/answers.mp3" -a -d "$L/Music/answers-sub"
documens=Documen${ls_}
documents=Document${ls_}
answer casefold-create-folded "the camera app creates $documents/answers.txt (Documents takes any file)" ok 10065 create "$S/$documents/answers.txt" 600
check casefold-landed-documents "it landed in the lower's Documents" test -f "$L/Documents/answers.txt"
# A spelling that folds to no default directory is a custom name: absent, and not made.
answer casefold-apart-absent "the camera app creates $documens/x.txt ($documens is not Documents)" ENOENT 10065 create "$S/$documens/x.txt" 600
answer casefold-apart-custom "the camera app makes the top-level $documens (a custom directory)" EPERM 10065 mkdir "$S/$documens" 700
answer casefold-apart-custom-plain "the camera app makes the top-level Custom" EPERM 10065 mkdir "$S/Custom" 700
check casefold-apart-not-made "no $documens on the lower" bash -c "! ls $L | grep -qx '$documens'"
