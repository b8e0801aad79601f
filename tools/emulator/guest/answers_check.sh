# Sourced by device_check.sh on the first boot: MediaProvider's answers where they differ from
# POSIX, asserted as the sample apps (setpriv, uid = gid) on user 0's storage, whose lower is the
# casefolded userdata /data/media/0. Each is the device's answer, as tests/android_answers_mount_test
# asserts it on the build machine's tmpfs and ext4 lowers; a different answer is a CHECK FAIL,
# and tools/emulator/run.sh requires every check named here to pass. Single calls go through
# answer_probe, which prints the errno's name (device_check.sh's answer).
S=/storage/emulated/0
L=/data/media/0
lower_stat() { stat -c '%a %u %g' "$L/$1"; }

# Renaming Android fails EACCES for every caller (do_rename), whatever its case on the lower.
for uid in 10065 10064; do
  answer "answers-rename-android-$uid" "app $uid renames Android" EACCES "$uid" rename "$S/Android" "$S/Android2"
  answer "answers-rename-android-case-$uid" "app $uid renames android (the lower's Android)" EACCES "$uid" rename "$S/android" "$S/Moved"
done
check answers-android-stays "Android/data is still there, nothing named Android2 or Moved" \
  bash -c "[[ -d $L/Android/data && ! -e $L/Android2 && ! -e $L/Moved ]]"

# renameat2 takes RENAME_NOREPLACE only: RENAME_EXCHANGE fails EINVAL, nothing moves.
as_app 10065 sh -c "echo a > $S/Download/answers-a.txt && echo b > $S/Download/answers-b.txt"
for uid in 10065 10064; do
  answer "answers-exchange-$uid" "app $uid: renameat2(RENAME_EXCHANGE)" EINVAL "$uid" rename "$S/Download/answers-a.txt" "$S/Download/answers-b.txt" exchange
done
answer answers-noreplace-taken "renameat2(RENAME_NOREPLACE) onto an existing name" EEXIST 10065 rename "$S/Download/answers-a.txt" "$S/Download/answers-b.txt" noreplace
answer answers-noreplace-free "renameat2(RENAME_NOREPLACE) to a free name" ok 10065 rename "$S/Download/answers-a.txt" "$S/Download/answers-c.txt" noreplace
check answers-exchange-nothing-moved "after the refused exchange b.txt holds b, c.txt holds a" \
  bash -c "[[ \$(cat $L/Download/answers-b.txt) == b && \$(cat $L/Download/answers-c.txt) == a ]]"

# chmod and chown of one's own file succeed and change nothing (pf_setattr).
as_app 10065 sh -c "echo n > $S/Download/answers-n.txt"
before=$(lower_stat Download/answers-n.txt)
seen_before=$(as_app 10065 stat -c %a "$S/Download/answers-n.txt")
answer answers-chmod-0600 "the owner's chmod 0600" ok 10065 chmod "$S/Download/answers-n.txt" 600
answer answers-chmod-0777 "the owner's chmod 0777" ok 10065 chmod "$S/Download/answers-n.txt" 777
answer answers-chown-self "the owner's chown to itself" ok 10065 chown "$S/Download/answers-n.txt" 10065 10065
answer answers-chown-other "the owner's chown to the gallery's uid" ok 10065 chown "$S/Download/answers-n.txt" 10061 10061
check answers-setattr-changed-nothing "mode and owner unchanged on the lower ($before) and through the mount ($seen_before)" \
  bash -c "[[ \$(stat -c '%a %u %g' $L/Download/answers-n.txt) == '$before' && \$(setpriv --reuid=10065 --regid=10065 --clear-groups stat -c %a $S/Download/answers-n.txt) == '$seen_before' ]] || stat -c '%a %u %g' $L/Download/answers-n.txt"

# New files are 0664 and new directories 0775, whatever the mode asked and the umask (077 here).
answer answers-create-0600 "create with mode 0600 under umask 077" ok 10065 create "$S/Download/answers-f.txt" 600
answer answers-mkdir-0700 "mkdir with mode 0700 under umask 077" ok 10065 mkdir "$S/Download/answers-d" 700
check answers-new-modes "the lower has the file 0664 and the directory 0775; the mount shows the same" \
  bash -c "[[ \$(stat -c %a $L/Download/answers-f.txt) == 664 && \$(stat -c %a $L/Download/answers-d) == 775 &&
    \$(setpriv --reuid=10065 --regid=10065 --clear-groups stat -c %a $S/Download/answers-f.txt $S/Download/answers-d | tr '\n' ' ') == '664 775 ' ]] ||
    stat -c '%n %a' $L/Download/answers-f.txt $L/Download/answers-d"

# Another package's Android/data/<pkg> or Android/obb/<pkg> is not there for an app even when it
# exists (isDirAccessAllowedForFuse, insertFileIfNecessaryForFuse: ENOENT), in any case spelling.
mkdir -p "$L/Android/obb/com.example.chat" && chown 10062:10062 "$L/Android/obb/com.example.chat"
check answers-private-dirs-exist "the chat app's Android/data and Android/obb directories exist on the lower" \
  test -d "$L/Android/data/com.example.chat" -a -d "$L/Android/obb/com.example.chat"
for uid in 10063 10064; do
  for d in Android/data/com.example.chat Android/obb/com.example.chat android/DATA/COM.EXAMPLE.CHAT Android/data/com.example.absent; do
    answer "answers-mkdir-private-$uid-${d//\//_}" "app $uid: mkdir $d" ENOENT "$uid" mkdir "$S/$d" 700
  done
  answer "answers-create-private-$uid" "app $uid: create Android/data/com.example.chat" ENOENT "$uid" create "$S/Android/data/com.example.chat" 600
done
answer answers-mkdir-own-private "the chat app: mkdir of its own Android/data/com.example.chat" EEXIST 10062 mkdir "$S/Android/data/com.example.chat" 700

# Target SDK 33 and up: READ_EXTERNAL_STORAGE alone reads no other app's media; below 33 it does.
photo=DCIM/Camera/IMG_20240614_090000.jpg
picked=DCIM/Camera/IMG_20240613_183000.jpg
check answers-sdk33-no-media "an app targeting SDK 33 with only READ_EXTERNAL_STORAGE: $photo EACCES, not listed" \
  bash -c "c=\$1; [[ \$c == EACCES ]] && ! setpriv --reuid=10101 --regid=10101 --clear-groups ls $S/DCIM/Camera | grep -qx IMG_20240614_090000.jpg || { echo \"open+read: \$c\"; false; }" _ "$(cell 10101 "$S/$photo" "$L/$photo")"
check answers-sdk29-media "an app targeting SDK 29 with the same grant lists and reads it" \
  bash -c "c=\$1; [[ \$c == raw || \$c == redacted ]] && setpriv --reuid=10103 --regid=10103 --clear-groups ls $S/DCIM/Camera | grep -qx IMG_20240614_090000.jpg || { echo \"open+read: \$c\"; false; }" _ "$(cell 10103 "$S/$photo" "$L/$photo")"
# Android 14's partial access (READ_MEDIA_VISUAL_USER_SELECTED): the picked photo only.
check answers-partial-lists-picked "partial access lists the picked photo and no other" \
  bash -c "got=\$(setpriv --reuid=10106 --regid=10106 --clear-groups ls $S/DCIM/Camera | grep '^IMG_' | tr '\n' ' '); [[ \$got == 'IMG_20240613_183000.jpg ' ]] || { echo \"listed: \$got\"; false; }"
check answers-partial-reads-picked "partial access reads the picked photo, not another, and writes neither" \
  bash -c "[[ \$1 == raw || \$1 == redacted ]] && [[ \$2 == EACCES ]] && ! setpriv --reuid=10106 --regid=10106 --clear-groups sh -c 'echo x >> $S/$picked' 2>/dev/null || { echo \"picked: \$1, other: \$2\"; false; }" \
  _ "$(cell 10106 "$S/$picked" "$L/$picked")" "$(cell 10106 "$S/$photo" "$L/$photo")"
