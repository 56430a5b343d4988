// filled in once the link shows what is missing
