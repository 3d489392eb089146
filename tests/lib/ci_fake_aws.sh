#!/usr/bin/env bash
# A stand-in for the AWS CLI, for tests/t_ci_recipes.sh:
#
#   aws s3 sync SRC s3://BUCKET[/PREFIX] [--size-only] [--no-progress] [--only-show-errors]
#
# copies the files under SRC into $FAKE_S3/buckets/BUCKET[/PREFIX] the way the
# real command uploads them: a file missing there, or of another size, or
# (without --size-only) newer than the copy there; hidden files too, and
# nothing is ever deleted. The bucket must exist (a directory). Every call is
# appended to $FAKE_S3/calls as "aws ARG...", every upload to $FAKE_S3/uploads
# as its key. Any other command or option fails as the real one does (exit 252
# for a bad command line, 255 for a missing source, 1 for a missing bucket).
set -u
: "${FAKE_S3:?FAKE_S3 is not set}"
printf '%s\n' "aws $*" >>"$FAKE_S3/calls"

if [ "${1:-}" != s3 ] || [ "${2:-}" != sync ]; then
	echo "aws (fake): only 's3 sync' is known, not '$*'" >&2
	exit 252
fi
shift 2
size_only=
paths=()
while [ $# -gt 0 ]; do
	case $1 in
	--size-only) size_only=1 ;;
	--no-progress | --only-show-errors) ;;
	-*)
		echo "Unknown options: $1" >&2
		exit 252
		;;
	*) paths+=("$1") ;;
	esac
	shift
done
if [ ${#paths[@]} -ne 2 ]; then
	echo "usage: aws s3 sync <LocalPath> <S3Uri> [options]" >&2
	exit 252
fi
src=${paths[0]%/}
dst=${paths[1]}
case $dst in
s3://?*) ;;
*)
	echo "aws (fake): '$dst' is not an s3:// address" >&2
	exit 252
	;;
esac
if [ ! -d "$src" ]; then
	echo "The user-provided path $src does not exist." >&2
	exit 255
fi
rest=${dst#s3://}
bucket=${rest%%/*}
prefix=${rest#"$bucket"}
prefix=${prefix#/}
prefix=${prefix%/}
root=$FAKE_S3/buckets/$bucket
if [ ! -d "$root" ]; then
	echo "fatal error: An error occurred (NoSuchBucket): The specified bucket does not exist" >&2
	exit 1
fi

(cd "$src" && find . \( -type f -o -type l \) -print | sort) | while IFS= read -r f; do
	rel=${f#./}
	key=${prefix:+$prefix/}$rel
	local_file=$src/$rel
	remote=$root/$key
	if [ -f "$remote" ] && [ "$(stat -L -c %s "$local_file")" = "$(stat -c %s "$remote")" ]; then
		[ "$size_only" ] && continue
		[ "$local_file" -nt "$remote" ] || continue
	fi
	mkdir -p "$(dirname "$remote")" && cp -L "$local_file" "$remote" || exit 1
	echo "upload: $local_file to s3://$bucket/$key"
	printf '%s\n' "$key" >>"$FAKE_S3/uploads"
done
