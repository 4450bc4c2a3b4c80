// expect: none
function exec(x) { return x; }
exec(process.argv[2]);
