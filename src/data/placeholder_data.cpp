// data module: loaders are added in their own files
