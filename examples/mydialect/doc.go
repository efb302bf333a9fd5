package mydialect
